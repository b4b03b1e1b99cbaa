# Copied from bfcl-eval 2026.3.23 (Apache-2.0; see ../NOTICE.md) by `replio eval import bfcl`.
# Changed: its imports of bfcl_eval's func_source_code modules made relative.
