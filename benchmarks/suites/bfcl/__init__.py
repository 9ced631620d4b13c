"""The Berkeley Function Calling Leaderboard, v4 (BFCL; Apache-2.0): its categories as tasks,
scored as its own checkers score them. Not yet registered in SUITE_MODULES: the suite is being
built (its pieces are tested one by one until it runs end to end)."""
