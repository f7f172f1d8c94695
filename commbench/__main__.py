from commbench.commands import main

raise SystemExit(main())
