"""An independent, hand-written TwoPhase (TwoPhase.tla) over Python frozensets: the oracle for
golden state counts. It shares no code with txncheck."""


def reachable(n_rm: int) -> set:
    rms = range(n_rm)
    init = (("working",) * n_rm, "init", frozenset(), frozenset())
    seen = {init}
    stack = [init]
    while stack:
        rm_state, tm_state, tm_prepared, msgs = stack.pop()
        succ = []
        for r in rms:
            if tm_state == "init" and ("Prepared", r) in msgs:
                succ.append((rm_state, tm_state, tm_prepared | {r}, msgs))
            if rm_state[r] == "working":
                succ.append((rm_state[:r] + ("prepared",) + rm_state[r + 1:], tm_state, tm_prepared,
                             msgs | {("Prepared", r)}))
                succ.append((rm_state[:r] + ("aborted",) + rm_state[r + 1:], tm_state, tm_prepared, msgs))
            if ("Commit",) in msgs:
                succ.append((rm_state[:r] + ("committed",) + rm_state[r + 1:], tm_state, tm_prepared, msgs))
            if ("Abort",) in msgs:
                succ.append((rm_state[:r] + ("aborted",) + rm_state[r + 1:], tm_state, tm_prepared, msgs))
        if tm_state == "init" and tm_prepared == frozenset(rms):
            succ.append((rm_state, "done", tm_prepared, msgs | {("Commit",)}))
        if tm_state == "init":
            succ.append((rm_state, "done", tm_prepared, msgs | {("Abort",)}))
        for s in succ:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return seen
