"""The rail network and the `trains` table.

Cities are joined by a rail graph (a spanning tree plus short links to near neighbours). A
train runs along a path of that graph and yields one row for every ordered pair of its stops in
its direction of travel (the paper's train records are city-pair services). Coverage trains
first run from every leaf of the spanning tree towards the largest city until they meet a
covered station, so trains alone connect every city (and hence every state); the remaining row
budget goes to trains between populous cities. Each train has a return working (odd/even
numbers), so the train network is symmetric.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
from utp_env.tools.clock import format_hhmm
from utp_env.tools.sandbox.common import Columns, lognormal_with_mean, rescale_to_mean, run_days, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile

RAIL_FACTOR = 1.2
MAX_TRAIN_HOURS = 66.0
DWELL_MIN = 5
NEIGHBOURS = 4
NEIGHBOUR_MAX_KM = 350.0
# type -> (speed km/h, classes)
TRAIN_TYPES: dict[str, tuple[float, list[str]]] = {
    "Express": (50.0, ["SL", "3A", "2A"]),
    "Superfast Express": (60.0, ["SL", "3A", "2A", "1A"]),
    "Mail": (52.0, ["SL", "3A", "2A"]),
    "Intercity Express": (55.0, ["2S", "CC", "3A"]),
    "Passenger": (35.0, ["2S", "SL", "3A"]),
    "Shatabdi Express": (75.0, ["CC", "EC", "3A"]),
    "Rajdhani Express": (72.0, ["3A", "2A", "1A"]),
    "Vande Bharat Express": (80.0, ["CC", "EC", "3A"]),
    "Duronto Express": (68.0, ["SL", "3A", "2A"]),
    "Humsafar Express": (62.0, ["3A", "3E"]),
    "Garib Rath Express": (60.0, ["3A", "CC"]),
}
STATIONS = {  # real main stations of major cities
    "Mumbai": "Chhatrapati Shivaji Maharaj Terminus", "Delhi": "New Delhi", "Kolkata": "Howrah Junction",
    "Chennai": "Chennai Central", "Bengaluru": "KSR Bengaluru City Junction", "Hyderabad": "Secunderabad Junction",
    "Lucknow": "Lucknow Charbagh", "Kanpur": "Kanpur Central", "Patna": "Patna Junction",
    "Thane": "Thane", "Navi Mumbai": "Vashi", "Visakhapatnam": "Visakhapatnam Junction",
    "Kochi": "Ernakulam Junction", "Thiruvananthapuram": "Thiruvananthapuram Central",
    "Nagpur": "Nagpur Junction", "Bhopal": "Bhopal Junction", "Indore": "Indore Junction",
}
STATION_SUFFIXES = ("Junction", "Railway Station", "Central", "City", "Cantonment", "Road")


@dataclass(frozen=True)
class RailNetwork:
    graph: nx.Graph
    tree: nx.Graph


def rail_network(cities: Cities, gc: np.ndarray) -> RailNetwork:
    """Spanning tree plus links to each city's nearest neighbours (rail km on the edges)."""
    n = cities.n
    full: nx.Graph[int] = nx.Graph()
    iu, ju = np.triu_indices(n, 1)
    full.add_weighted_edges_from(zip(iu.tolist(), ju.tolist(), (gc[iu, ju] * RAIL_FACTOR).tolist(), strict=True))
    tree = nx.minimum_spanning_tree(full, algorithm="kruskal")
    graph = nx.Graph(tree)
    for i in range(n):
        order = np.argsort(gc[i], kind="stable")[1 : NEIGHBOURS + 1]
        for j in order.tolist():
            if gc[i, j] <= NEIGHBOUR_MAX_KM:
                graph.add_edge(i, j, weight=float(gc[i, j] * RAIL_FACTOR))
    return RailNetwork(graph, tree)


def coverage_routes(network: RailNetwork, root: int) -> list[list[int]]:
    """Paths of the spanning tree from each leaf towards `root`, each ending at a covered city."""
    tree = network.tree
    parent = nx.predecessor(tree, root)
    depth = nx.shortest_path_length(tree, root, weight="weight")
    leaves = sorted((v for v in tree if tree.degree(v) == 1 and v != root), key=lambda v: (-depth[v], v))
    covered = {root}
    routes = []
    for leaf in leaves:
        path = [leaf]
        while path[-1] not in covered:
            covered.add(path[-1])
            path.append(parent[path[-1]][0])
        routes.append(path)
    if len(tree) == 1:
        return []
    return routes


def _station_names(cities: Cities, rng: np.random.Generator) -> list[str]:
    pick = rng.integers(0, len(STATION_SUFFIXES), cities.n)
    return [STATIONS.get(c, f"{c} {STATION_SUFFIXES[k]}") for c, k in zip(cities.name, pick.tolist(), strict=True)]


def trains_table(cities: Cities, gc: np.ndarray, profile: SandboxProfile, seed: int) -> Columns:
    """Exactly `profile.trains` rows; coverage trains first, then trains between populous cities."""
    rng = stage_rng(seed, "trains")
    network = rail_network(cities, gc)
    routes = coverage_routes(network, int(np.argmax(cities.population)))
    need = sum(len(r) * (len(r) - 1) for r in routes)
    if need > profile.trains:
        raise ValueError(f"profile {profile.name!r}: trains={profile.trains} is below the {need} rows "
                         "the coverage trains need")
    weight = cities.population.astype(float) ** 0.7
    weight /= weight.sum()
    paths_from: dict[int, dict[int, list[int]]] = {}
    budget = profile.trains - need
    while budget > 0:
        a, b = rng.choice(cities.n, 2, replace=False, p=weight).tolist()
        if a not in paths_from:
            paths_from[a] = nx.single_source_dijkstra_path(network.graph, a, weight="weight")
        path = paths_from[a][b]
        if len(path) > 40:
            path = path[:40]
        rows = len(path) * (len(path) - 1)
        if rows == 0:
            continue
        routes.append(path)
        budget -= rows
    return _rows_of_routes(cities, gc, routes, profile, rng)


def _rows_of_routes(cities: Cities, gc: np.ndarray, routes: list[list[int]], profile: SandboxProfile,
                    rng: np.random.Generator) -> Columns:
    stations = _station_names(cities, rng)
    numbers = rng.permutation(np.arange(10001, 30000, 2))
    if len(routes) > len(numbers):
        raise ValueError(f"profile {profile.name!r}: too many trains ({2 * len(routes)}) for 5-digit numbers")
    types = list(TRAIN_TYPES)
    cols: dict[str, list] = {k: [] for k in ("train_number", "train_name", "origin_city", "dest_city",
                                             "origin_station", "dest_station", "dep_time", "arr_time",
                                             "arr_day_offset", "duration_min", "run_days", "classes",
                                             "fare_inr")}
    delay_base: list[float] = []
    remaining = profile.trains
    base_delays = lognormal_with_mean(rng, 1.0, profile.calibration.lognormal_sigma, 2 * len(routes))
    for r, route in enumerate(routes):
        for direction, path in enumerate((route, route[::-1])):
            if remaining <= 0:
                break
            number = f"{int(numbers[r]) + direction:05d}"
            seg_km = gc[path[:-1], path[1:]] * RAIL_FACTOR
            total_km = float(seg_km.sum())
            kind = types[int(rng.integers(0, len(types)))]
            speed, classes = TRAIN_TYPES[kind]
            moving_hours = MAX_TRAIN_HOURS - DWELL_MIN * max(len(path) - 2, 0) / 60.0
            speed = max(speed, total_km / max(moving_hours, 1.0))
            run = np.round(seg_km / speed * 60.0).astype(np.int64) + 1
            dwell = np.where(np.arange(len(path)) == 0, 0, DWELL_MIN)
            start = int(rng.integers(0, 288)) * 5
            arrive = start + np.concatenate([[0], np.cumsum(run + dwell[:-1])])  # arrival at each stop
            depart = arrive + dwell
            cum_km = np.concatenate([[0.0], np.cumsum(seg_km)])
            name = f"{cities.name[path[0]]} {cities.name[path[-1]]} {kind}"
            days = run_days(rng, 1, 0.55)[0]
            k = len(path)
            for i in range(k - 1):
                for j in range(i + 1, k):
                    if remaining <= 0:
                        break
                    dep_abs, arr_abs = int(depart[i]), int(arrive[j])
                    cols["train_number"].append(number)
                    cols["train_name"].append(name)
                    cols["origin_city"].append(cities.name[path[i]])
                    cols["dest_city"].append(cities.name[path[j]])
                    cols["origin_station"].append(stations[path[i]])
                    cols["dest_station"].append(stations[path[j]])
                    cols["dep_time"].append(format_hhmm(dep_abs))
                    cols["arr_time"].append(format_hhmm(arr_abs))
                    cols["arr_day_offset"].append(arr_abs // 1440 - dep_abs // 1440)
                    cols["duration_min"].append(arr_abs - dep_abs)
                    cols["run_days"].append(days)
                    cols["classes"].append(classes)
                    cols["fare_inr"].append(round(150.0 + 1.45 * float(cum_km[j] - cum_km[i])))
                    # delays build up along the route
                    delay_base.append(float(base_delays[2 * r + direction]) * (0.6 + 0.8 * j / (k - 1)))
                    remaining -= 1
    cols.update(_delay_columns(np.array(delay_base), profile, rng))
    return cols


def _delay_columns(base: np.ndarray, profile: SandboxProfile, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The five delay horizons: the row's base delay with horizon noise, each column calibrated
    to its own target mean (spread over the paper's range); ~6% of rows carry no statistics."""
    n = len(base)
    missing = rng.random(n) < 0.06
    out = {}
    for col, target in profile.calibration.train_horizon_means_min.items():
        values = base * rng.lognormal(0.0, 0.25, n)
        values[missing] = np.nan
        out[col] = np.round(rescale_to_mean(values, target), 1)
    return out
