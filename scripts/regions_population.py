#!/usr/bin/env python3
"""The synthetic population of the regions figures (docs/regions.md): 20 000
players over four regions with the real ratings of
data/lichess/lichess-games.csv in game order, arriving 20 a second.

Each player has a home region (uniform): 20-60 ms there, 60-150 ms more
elsewhere; 5 % miss one of the other regions. Fixed seed: the same file
every time. `pingMs` is the round trip to an API in eu-west (the player's
eu-west latency), what the Ping-only model compares.

  scripts/regions_population.py > /tmp/regions-population.csv
"""
import csv
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REGIONS = ["eu-west", "us-east", "ap-south", "sa-east"]
PLAYERS = 20_000
RATE = 20.0


def ratings():
    while True:
        with open(ROOT / "data/lichess/lichess-games.csv", newline="") as f:
            for row in csv.DictReader(f):
                yield int(row["white_rating"])
                yield int(row["black_rating"])


def main():
    rng = random.Random(17)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["at", "playerId", "mmr", "pingMs", "latencies"])
    source = ratings()
    for i in range(PLAYERS):
        home = rng.randrange(len(REGIONS))
        base = rng.uniform(20, 60)
        lat = {}
        for k, name in enumerate(REGIONS):
            lat[name] = round(base if k == home else base + rng.uniform(60, 150))
        if rng.random() < 0.05:
            others = [n for k, n in enumerate(REGIONS) if k != home]
            missing = rng.choice(others)
            ping = lat["eu-west"]
            del lat[missing]
        else:
            ping = lat["eu-west"]
        cell = "|".join(f"{n}={v}" for n, v in lat.items())
        out.writerow([f"{i / RATE:.2f}", f"p{i}", next(source), ping, cell])


if __name__ == "__main__":
    main()
