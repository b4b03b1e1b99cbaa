# Written by `replio eval import tau2` (see environments/NOTICE.md).
"""The parts of tau2-bench's ``utils/utils.py`` its copied toolkit uses: its data folder, here
the copy's own, and two functions copied as they are (nothing reads a ``.env``)."""

import hashlib
import json
from pathlib import Path

from deepdiff import DeepDiff

DATA_DIR = Path(__file__).resolve().parents[2] / ".data"


def get_dict_hash(obj: dict) -> str:
    """
    Generate a unique hash for dict.
    Returns a hex string representation of the hash.
    """
    hash_string = json.dumps(obj, sort_keys=True, default=str)
    return hashlib.sha256(hash_string.encode()).hexdigest()

def show_dict_diff(dict1: dict, dict2: dict) -> str:
    """
    Show the difference between two dictionaries.
    """
    diff = DeepDiff(dict1, dict2)
    return diff