from commbench.cli import main

raise SystemExit(main())
