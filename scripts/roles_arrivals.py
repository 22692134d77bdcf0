#!/usr/bin/env python3
"""Arrivals of the role-queue example (docs/rules.md, "Role queues"): the
real ratings of data/lichess/lichess-games.csv in game order, two players a
second for ten minutes, each listing the roles they will play in a `[5, 5]`
mode of one tank, two damage and two support per team. Few play tank, many
damage; a third are flexible (two or three roles).

  scripts/roles_arrivals.py > examples/roles-arrivals.csv
"""
import csv
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROLES = ["tank", "damage", "support"]


def ratings():
    with open(ROOT / "data/lichess/lichess-games.csv", newline="") as f:
        for row in csv.DictReader(f):
            yield int(row["white_rating"])
            yield int(row["black_rating"])


def roles(rng):
    """One player's roles: 7 % tank only, 40 % damage only, 20 % support
    only, 33 % two or three roles."""
    draw = rng.random()
    if draw < 0.07:
        return ["tank"]
    if draw < 0.47:
        return ["damage"]
    if draw < 0.67:
        return ["support"]
    if draw < 0.90:
        return sorted(rng.sample(ROLES, 2), key=ROLES.index)
    return list(ROLES)


def main():
    rng = random.Random(17)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["at", "playerId", "mmr", "attributes"])
    source = ratings()
    for i in range(1200):
        attributes = json.dumps({"roles": roles(rng)}, separators=(",", ":"))
        out.writerow([i / 2, f"p{i}", next(source), attributes])


if __name__ == "__main__":
    main()
