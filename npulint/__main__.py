from npulint.cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through the console script
    main()
