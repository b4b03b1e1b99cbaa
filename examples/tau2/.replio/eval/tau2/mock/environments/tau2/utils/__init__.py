# Copied from tau2-bench 1.0.1 (MIT; see environments/NOTICE.md) by `replio eval import tau2`.
# Changed: its imports of its own modules made relative.
from .io_utils import dump_file, load_file
from .pydantic_utils import get_pydantic_hash, update_pydantic_model_with_dict
from .utils import DATA_DIR, get_dict_hash, show_dict_diff

__all__ = [
    "dump_file",
    "load_file",
    "get_pydantic_hash",
    "update_pydantic_model_with_dict",
    "DATA_DIR",
    "get_dict_hash",
    "show_dict_diff",
]
