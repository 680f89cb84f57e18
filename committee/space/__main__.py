"""`python -m memex.committee.space OUT`: stage the committee's Space tree in OUT."""

import argparse
from pathlib import Path

from memex.committee.space import stage

parser = argparse.ArgumentParser(description="Stage the investment committee's Hugging Face "
                                             "Space (then: openenv push OUT --no-interface).")
parser.add_argument("out", type=Path, help="a new folder for the Space tree")
print(f"committee Space staged in {stage(parser.parse_args().out)}")
