"""A SIGTERM whose handler raises while a finaliser runs (z3's `__del__` in a gate worker) is swallowed by
Python, printed as "Exception ignored in ..." with a traceback, and the process goes on. With
`redeliver_swallowed_signals` the signal is sent again and ends the process once the finaliser returned."""
import subprocess
import sys

CHILD = r'''
import signal, sys, time
from txncheck.checker.processes import redeliver_swallowed_signals

def term(signum, frame):
    raise SystemExit(143)

signal.signal(signal.SIGTERM, term)
if sys.argv[1] == "hook":
    redeliver_swallowed_signals(lambda exc: signal.SIGTERM if isinstance(exc, SystemExit) else None)

class Slow:
    def __del__(self):
        print("in finaliser", flush=True)
        t = time.monotonic()
        while time.monotonic() - t < 60:  # the signal lands here
            time.sleep(0.01)

x = Slow()
del x
print("after the finaliser", flush=True)
time.sleep(60)
'''


def _run(mode: str, second_signal: bool):
    proc = subprocess.Popen([sys.executable, "-c", CHILD, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline() == "in finaliser\n"
    proc.terminate()
    if second_signal:  # the first one was swallowed: the process went on past the finaliser
        assert proc.stdout.readline() == "after the finaliser\n"
        proc.terminate()
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def test_without_the_hook_a_signal_in_a_finaliser_is_swallowed_with_a_traceback():
    code, out, err = _run("plain", second_signal=True)
    assert code == 143
    assert "Exception ignored" in err and "Traceback" in err


def test_with_the_hook_the_signal_ends_the_process_after_the_finaliser_quietly():
    code, out, err = _run("hook", second_signal=False)
    assert code == 143, err
    assert "after the finaliser" in out  # raised again outside the finaliser, at the next line
    assert err == ""


def _redeliver_in_a_thread(monkeypatch, kill, main):
    """Run the redelivering thread with pthread_kill and main_thread replaced; returns what escaped it."""
    import threading

    from txncheck.checker import processes
    escaped = []
    monkeypatch.setattr(processes.signal, "pthread_kill", kill)
    monkeypatch.setattr(processes.threading, "main_thread", lambda: main)
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    t = threading.Thread(target=processes._send_later, args=(15,))
    t.start()
    t.join()
    return escaped


def test_a_signal_redelivered_after_the_main_thread_ended_is_dropped_quietly(monkeypatch):
    """The gate ended by SIGTERM while a finaliser ran: by the time the signal is sent again the main thread
    may have gone (ESRCH); that thread printed a traceback as the process's last words."""
    import threading
    sent = []

    def gone(ident, signum):
        raise ProcessLookupError(3, "No such process")
    assert _redeliver_in_a_thread(monkeypatch, gone, threading.current_thread()) == []
    ended = threading.Thread(target=lambda: None)
    ended.start()
    ended.join()
    assert _redeliver_in_a_thread(monkeypatch, lambda ident, signum: sent.append(signum), ended) == []
    assert sent == []  # not sent to a thread that has ended
    assert _redeliver_in_a_thread(monkeypatch, lambda ident, signum: sent.append(signum),
                                  threading.current_thread()) == []
    assert sent == [15]
