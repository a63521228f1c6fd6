"""The India sandbox generator: profiles, determinism, connectivity, keys, names, crowd, calibration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from utp_env.cli import main as cli_main
from utp_env.tools.database import Database, normalize
from utp_env.tools.india.air_facts import read_carriers
from utp_env.tools.sandbox import PROFILES, build_sandbox, open_sandbox, sandbox_path
from utp_env.tools.sandbox.calibration import calibrate, connectivity
from utp_env.tools.sandbox.common import apportion
from utp_env.tools.sandbox.crowd import open_hours, windows_of
from utp_env.tools.sandbox.profiles import CONFIG_DIR, SandboxProfile, load_profile
from utp_env.tools.sandbox.venues import sight_of
from utp_env.tools.schema import ATTRACTION_CATEGORIES, TABLES

MINI = PROFILES["mini"]


def test_profile_yaml_equals_code_defaults() -> None:
    for name, profile in PROFILES.items():
        shipped = yaml.safe_load((CONFIG_DIR / f"{name}.yaml").read_text())
        assert shipped == profile.model_dump(mode="json")
        assert load_profile(CONFIG_DIR / f"{name}.yaml") == profile


def test_bad_profile_names_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("name: x\nn_states: 1\nn_cities: -3\n")
    with pytest.raises(ValueError, match=r"p\.yaml: n_cities"):
        load_profile(bad)
    with pytest.raises(ValueError, match="unknown sandbox profile 'huge'"):
        load_profile("huge")


def test_mini_counts_and_manifest(mini_db: Database) -> None:
    counts = mini_db.counts()
    assert counts["cities"] == MINI.n_cities
    assert counts["distances"] == MINI.n_cities * (MINI.n_cities - 1)
    for table in ("buses", "road_routes", "restaurants", "attractions", "accommodations",
                  "events", "transit_stops"):
        assert counts[table] == getattr(MINI, table), table
    assert counts["flights"] > 0  # the real network's flights between the profile's cities: no count
    assert counts["trains"] > 0  # every real train calling at two mini cities: no target count
    assert counts["crowd"] > 0
    assert set(mini_db.tables["cities"].columns["state"]) == set(MINI.states)
    m = mini_db.manifest
    assert m["profile"] == "mini" and m["seed"] == 0 and m["content_hash"] == mini_db.content_hash
    assert m["row_counts"] == counts


def test_same_seed_same_bytes_different_seed_differs(mini_db_path: Path, tmp_path: Path) -> None:
    first, again = tmp_path / "first", tmp_path / "again"
    build_sandbox("mini", 0, first)
    build_sandbox("mini", 0, again)
    for table in TABLES:
        assert (again / f"{table}.csv").read_bytes() == (first / f"{table}.csv").read_bytes(), table
        assert (again / f"{table}.csv").read_bytes() == (mini_db_path / f"{table}.csv").read_bytes(), table
    assert (again / "manifest.json").read_bytes() == (first / "manifest.json").read_bytes()
    other = build_sandbox("mini", 1, tmp_path / "seed1")
    assert other["content_hash"] != Database.open(first).content_hash
    # geography is real and fixed; generated tables differ
    assert (tmp_path / "seed1" / "cities.csv").read_bytes() == (mini_db_path / "cities.csv").read_bytes()
    assert (tmp_path / "seed1" / "trains.csv").read_bytes() != (mini_db_path / "trains.csv").read_bytes()


def test_connectivity_all_variants(mini_db: Database) -> None:
    assert connectivity(mini_db) == {"all_modes": True, "no_flight": True, "no_cab": True}


def test_transport_keys_and_pairs(mini_db: Database) -> None:
    road = mini_db.tables["road_routes"].columns
    road_pairs = set(zip(road["origin_city"], road["dest_city"], strict=True))
    assert all((d, o) in road_pairs for o, d in road_pairs)  # routes go both ways
    bus = mini_db.tables["buses"].columns
    assert set(zip(bus["origin_city"], bus["dest_city"], strict=True)) <= road_pairs
    dist = mini_db.tables["distances"].columns
    cities = mini_db.cities
    assert set(zip(dist["origin_city"], dist["dest_city"], strict=True)) == {
        (a, b) for a in cities for b in cities if a != b}
    # the road route and the distance row of a pair agree
    for i in range(0, len(road["origin_city"]), 7):
        j = mini_db.pair_rows("distances", road["origin_city"][i], road["dest_city"][i])[0]
        assert dist["distance_km"][j] == road["distance_km"][i]
        assert dist["duration_min"][j] == road["free_flow_min"][i]
    for table in ("flights", "trains", "buses"):
        c = mini_db.tables[table].columns
        assert not any(o == d for o, d in zip(c["origin_city"], c["dest_city"], strict=True))
        dep = np.array([int(t[:2]) * 60 + int(t[3:]) for t in c["dep_time"]])
        arr = np.array([int(t[:2]) * 60 + int(t[3:]) for t in c["arr_time"]])
        assert np.array_equal(dep + c["duration_min"], arr + 1440 * c["arr_day_offset"]), table


def test_transit_stops_point_at_existing_venues(mini_db: Database) -> None:
    t = mini_db.tables["transit_stops"].columns
    tables = {"attraction": "attractions", "restaurant": "restaurants", "accommodation": "accommodations"}
    for kind, city, name in zip(t["poi_type"], t["city"], t["poi_name"], strict=True):
        assert mini_db.venue(tables[kind], city, name) is not None, (kind, city, name)
    assert np.all((t["distance_m"] >= 20) & (t["distance_m"] <= 9000))


def test_flight_statistics_are_consistent(mini_db: Database) -> None:
    f = mini_db.tables["flights"].columns
    has = ~np.isnan(f["otp_total"])
    assert 0 < has.sum() < len(has)  # most flights have statistics, some do not
    parts = sum(f[c] for c in ("otp_on_time", "otp_late", "otp_very_late", "otp_excessive", "otp_cancelled",
                               "otp_diverted"))
    assert np.array_equal(parts[has], f["otp_total"][has])
    assert np.all(f["delay_max_min"][has] >= f["delay_avg_min"][has])
    flying = {c.code: c.airline for c in read_carriers() if c.flying}
    assert {code.split("-")[0] for code in f["flight_number"]} <= set(flying)
    assert all(flying[n.split("-")[0]] == a for n, a in zip(f["flight_number"], f["airline"], strict=True))
    import airportsdata

    known = {a["iata"] for a in airportsdata.load("IATA").values() if a["country"] == "IN"}
    assert set(f["origin_airport"]) | set(f["dest_airport"]) <= known


def test_venue_names_unique_per_city_and_floors(mini_db: Database) -> None:
    for table, floor in (("accommodations", 1), ("attractions", 2), ("restaurants", 3)):
        c = mini_db.tables[table].columns
        keys = [(normalize(city), normalize(name)) for city, name in zip(c["city"], c["name"], strict=True)]
        assert len(keys) == len(set(keys)), table
        for city in mini_db.cities:
            assert len(mini_db.city_rows(table, city)) >= floor, (table, city)
    a = mini_db.tables["attractions"].columns
    for city, name, cats, hours in zip(a["city"], a["name"], a["categories"], a["visit_duration_hr"], strict=True):
        sight = sight_of(city, name)
        if sight is None:  # a generated place: its kind's visit, never above its categories' Table 7 mean
            assert 0.5 <= hours <= np.mean([ATTRACTION_CATEGORIES[x] for x in cats]) + 1e-9, (city, name, hours)
        else:  # a real sight: its listed typical visit
            assert hours == sight.visit_hr
    assert mini_db.venue("attractions", "Mumbai", "gateway of india") is not None  # real landmarks first


def test_crowd_coverage_and_windows(mini_db: Database) -> None:
    cities = mini_db.tables["cities"].columns
    with_crowd = {c for c, h in zip(cities["city"], cities["has_crowd_data"], strict=True) if h}
    assert len(with_crowd) == MINI.crowd_cities
    expected = set()
    for kind, table in (("attraction", "attractions"), ("restaurant", "restaurants")):
        t = mini_db.tables[table].columns
        for i, (name, city) in enumerate(zip(t["name"], t["city"], strict=True)):
            if city in with_crowd:
                expected.add((city, kind, name))
                row = mini_db.crowd_row(city, kind, name)
                assert row is not None
                crowd = mini_db.tables["crowd"].row(row)
                covered = [h for s, e, _ in crowd["windows"]
                           for h in open_hours(f"{s:02d}:00", f"{(e + 1) % 24:02d}:00")]
                assert covered == open_hours(t["open_time"][i], t["close_time"][i])
    c = mini_db.tables["crowd"].columns
    assert set(zip(c["city"], c["venue_type"], c["venue_name"], strict=True)) == expected
    assert any(q == [] for q in c["quiet_hours"]) and any(p is None for p in c["peak_window"])
    assert any(s > e for w in c["windows"] for s, e, _ in w)  # some window wraps past midnight


def test_windows_of_merges_runs_and_wraps() -> None:
    assert windows_of([22, 23, 0, 1, 2], [2, 2, 2, 4, 4]) == [(22, 0, "A"), (1, 2, "H")]
    assert open_hours("18:00", "01:00") == [18, 19, 20, 21, 22, 23, 0]
    assert open_hours("09:00", "00:00")[-1] == 23


@given(st.integers(0, 5000), st.lists(st.floats(0.01, 1e6), min_size=1, max_size=50), st.integers(0, 3))
def test_apportion_sums_exactly(total: int, weights: list[float], minimum: int) -> None:
    if total < minimum * len(weights):
        with pytest.raises(ValueError):
            apportion(total, np.array(weights), minimum)
        return
    shares = apportion(total, np.array(weights), minimum)
    assert shares.sum() == total and shares.min() >= minimum


def test_mini_calibration_passes(mini_db: Database) -> None:
    report = calibrate(mini_db)
    failed = [c for c in report.checks if not c.passed]
    assert not failed, failed
    assert len(report.hourly_intensity["attraction"]) == 24


def test_open_sandbox_builds_once_into_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("UTP_ENV_CACHE", str(tmp_path))
    db = open_sandbox("mini", 0)
    assert db.path == sandbox_path("mini", 0) and db.path.parent == tmp_path
    assert "building the mini sandbox" in capsys.readouterr().err
    stamp = (db.path / "trains.csv").stat().st_mtime_ns
    again = open_sandbox("mini", 0)
    assert "building" not in capsys.readouterr().err
    assert again.content_hash == db.content_hash
    assert (db.path / "trains.csv").stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir()] == [db.path.name]  # no temp dirs left behind


def test_cli_validate_and_stats(mini_db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["data", "validate", str(mini_db_path)]) == 0
    assert "OK" in capsys.readouterr().out
    assert cli_main(["data", "stats", str(mini_db_path)]) == 0
    out = capsys.readouterr().out
    assert "40.59 ± 1.5" in out
    # every figure holds on mini but the meal lengths of its 60 queries, whose targets are the full
    # sandbox's: mini's cities are mostly crowd cities, busier at meal hours, so the crowd buffer
    # lengthens its meals a few minutes (tests/data/test_queries_realism.py test_mini_query_figures);
    # such a miss is printed "short" with that reason, so nothing FAILs and the exit status is 0
    assert "FAIL" not in out
    assert "meal lengths: the targets are the full sandbox's" in out or " short " not in out

    bad = tmp_path / "bad"
    bad.mkdir()
    assert cli_main(["data", "validate", str(bad)]) == 2
    assert "missing" in capsys.readouterr().err


def test_stats_exits_1_and_names_a_figure_outside_its_target(capsys: pytest.CaptureFixture[str]) -> None:
    from utp_env.cli.data import _print_figures
    from utp_env.tools.sandbox.traveller.figure import Figure

    figures = [Figure(name="trains a day A -> B", value=3, target=">= 5", passed=False, source="a timetable"),
               Figure(name="trains a day C -> D", value=2, target=">= 5", passed=False, source="a timetable",
                      shortfall="the source lacks them"),
               Figure(name="fastest E -> F (h)", value=7.8, target="<= 8", passed=True, source="a timetable")]
    assert _print_figures("traveller figure", figures) == 1
    out = capsys.readouterr().out
    assert "1/3 traveller figures pass, 1 short for a known reason:\n  the source lacks them" in out
    assert out.rstrip().endswith("FAIL (1 of the traveller figures, outside the target): trains a day A -> B")


def test_cli_build_writes_tables_and_queries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "built"
    assert cli_main(["data", "build", "--profile", "mini", "--seed", "3", "--out", str(out), "--queries", "2"]) == 0
    assert "built mini sandbox (seed 3)" in capsys.readouterr().out
    assert Database.open(out).manifest["seed"] == 3
    assert (out / "queries.jsonl").exists()
    with pytest.raises(SystemExit):
        cli_main(["data", "build", "--seed", "-1"])


def test_bad_seed_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="seed"):
        build_sandbox("mini", -1, tmp_path)
    assert isinstance(MINI, SandboxProfile)


def test_data_md_is_generated_and_documents_every_column() -> None:
    from utp_env.tools.sandbox.docs import DATA_MD, render_data_md

    text = DATA_MD.read_text(encoding="utf-8")
    assert text == render_data_md(), "docs/DATA.md is stale: run `python -m utp_env.tools.sandbox.docs`"
    for name, spec in TABLES.items():
        section = text.split(f"### `{name}`", 1)[1].split("### ", 1)[0]
        for column in spec.model.model_fields:
            assert f"| `{column}` |" in section, (name, column)


@pytest.mark.slow
def test_full_profile_counts_and_calibration(tmp_path: Path) -> None:
    """Row counts and calibration of the full profile. Build and open times (targets < 60 s and
    < 2 s) are measured by benchmarks/sandbox.py, not here."""
    manifest = build_sandbox("full", 0, tmp_path / "full")
    db = Database.open(tmp_path / "full")
    # the trains and flights tables have no target count: the real trains and air routes between the cities
    expected = {"cities": 504, "buses": 34_925, "restaurants": 3_433,
                "attractions": 2_990, "accommodations": 3_670, "events": 783, "transit_stops": 10_025,
                "distances": 504 * 503, "road_routes": 4_052}
    counts = db.counts()
    assert {k: counts[k] for k in expected} == expected
    assert manifest["states"] == 33 and len(set(db.tables["cities"].columns["state"])) == 33
    assert int(db.tables["cities"].columns["has_crowd_data"].sum()) == 20
    assert manifest["airport_cities"] == len(set(db.tables["flights"].columns["origin_city"]))
    report = calibrate(db)
    for c in report.checks:
        print(f"  {c.name}: {c.value} (target {c.target}) {'pass' if c.passed else 'FAIL'}")
    assert report.passed, [c for c in report.checks if not c.passed]
