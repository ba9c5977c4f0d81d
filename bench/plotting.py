"""What the bench/ plot scripts share: matplotlib, headless, or a clear exit."""
import sys


def pyplot(tool):
    """matplotlib.pyplot on the Agg backend; exits naming `tool` if matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        sys.exit(f"{tool}: matplotlib is missing (apt-get install python3-matplotlib;"
                 " run it with /usr/bin/python3)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt
