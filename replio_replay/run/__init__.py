"""Running a suite: the run request planned and executed (`suite`), cases in their worktrees
(`runner`, `worktree`, `gitrepo`), the agent loop (`engine`) and its transcript scored into a
result (`scoring`).

Import from those modules: this package imports nothing.
"""
