"""txncheck.cli."""
def main():
    print("hi")
