# Copied from tau2-bench 1.0.1 (MIT; see environments/NOTICE.md) by `replio eval import tau2`.
# Changed: its imports of its own modules made relative.
from ...utils.utils import DATA_DIR

RETAIL_DATA_DIR = DATA_DIR / "tau2" / "domains" / "retail"
RETAIL_DB_PATH = RETAIL_DATA_DIR / "db.json"
RETAIL_POLICY_PATH = RETAIL_DATA_DIR / "policy.md"
RETAIL_TASK_SET_PATH = RETAIL_DATA_DIR / "tasks.json"
