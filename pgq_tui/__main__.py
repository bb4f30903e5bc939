from pgq_tui.cli import main

raise SystemExit(main())
