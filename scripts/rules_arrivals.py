#!/usr/bin/env python3
"""Arrivals of the map-vote example (docs/rules.md): the real ratings of
data/lichess/lichess-games.csv in game order, one player every second for
ten minutes, each on one of two client builds (a fifth still on the old
one) and ticking the maps they will play among three.

  scripts/rules_arrivals.py > examples/rules-arrivals.csv
"""
import csv
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAPS = ["dust", "inferno", "nuke"]


def ratings():
    with open(ROOT / "data/lichess/lichess-games.csv", newline="") as f:
        for row in csv.DictReader(f):
            yield int(row["white_rating"])
            yield int(row["black_rating"])


def main():
    rng = random.Random(16)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["at", "playerId", "mmr", "attributes"])
    source = ratings()
    for i in range(600):
        maps = [m for m in MAPS if rng.random() < 0.6] or [rng.choice(MAPS)]
        build = "1.4" if rng.random() < 0.2 else "1.5"
        attributes = json.dumps({"build": build, "maps": maps}, separators=(",", ":"))
        out.writerow([i, f"p{i}", next(source), attributes])


if __name__ == "__main__":
    main()
