"""Rich renderings of a Snapshot and of the advisor's output, shared by the commands (`snapshot`,
`advise`) and the dashboard. Presentation only: no SQL, no argparse, no Textual."""
