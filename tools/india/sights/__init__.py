"""The vendored open-data source `sights` (CSV tables, SOURCE.json, licence); a package only so that the wheel
carries them as package data (docs/DATA.md names the source, its licence and date)."""
