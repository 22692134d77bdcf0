#!/usr/bin/env python3
"""Arrival files of the thin-pool examples (docs/simulate.md), from the real
ratings of data/lichess/lichess-games.csv in game order, one player id each.

  scripts/thin_pool_arrivals.py thin > examples/thin-pool-arrivals.csv
  scripts/thin_pool_arrivals.py royale > examples/royale-arrivals.csv
"""
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ratings():
    with open(ROOT / "data/lichess/lichess-games.csv", newline="") as f:
        for row in csv.DictReader(f):
            yield int(row["white_rating"])
            yield int(row["black_rating"])


def main(kind):
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["at", "playerId", "mmr", "pingMs", "partyId", "partyMembers"])
    source = ratings()
    if kind == "thin":
        # One arrival every 8 s for 30 minutes.
        for i in range(225):
            out.writerow([8 * i, f"p{i}", next(source), "", "", ""])
        return
    # Royale: 2 players a second for 10 minutes, in parties of 1 to 3
    # (by party: half solos, a quarter duos, a quarter trios).
    pattern = [1, 2, 1, 3, 1, 2, 1, 3]
    player, party, k = 0, 0, 0
    while player < 1200:
        size = pattern[k % len(pattern)]
        k += 1
        ids = [f"r{player + m}" for m in range(size)]
        members = "|".join(ids) if size > 1 else ""
        pid = f"party{party}" if size > 1 else ""
        for m, member in enumerate(ids):
            out.writerow([(player + m) / 2, member, next(source), "", pid, members])
        player += size
        party += 1


if __name__ == "__main__":
    main(sys.argv[1])
