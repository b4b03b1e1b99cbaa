# Written by `replio eval import tau2` (see environments/NOTICE.md).
