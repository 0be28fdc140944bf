from stabilitygate.cli import main

raise SystemExit(main())
