def ensure_env():
    raise RuntimeError("devstack not written yet")
