"""Start the bargaining arena: `python app.py` serves http://127.0.0.1:7860 (a Hugging Face Space runs this file).

The arena's entry point is bargain/app.py, installed as the `bargain-arena` command; this file stands in for it
at the repository's root. Every flag has an environment variable: see `python app.py --help`.
"""

from bargain.app import main

if __name__ == "__main__":
    main()
