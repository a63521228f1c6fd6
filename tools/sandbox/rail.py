"""The rail network and the `trains` table.

The rail graph (`rail_network`) joins every city to its nearest neighbours (at most
`NEIGHBOUR_MAX_KM` apart) plus a minimum spanning tree (the branch lines), and lays India's trunk
corridors over it (`RAIL_LINES` in tools/india/__init__.py: Delhi-Kota-Vadodara-Mumbai,
Delhi-Kanpur-Varanasi-Kolkata, Mumbai-Nagpur-Kolkata, Kolkata-Visakhapatnam-Chennai,
Delhi-Bhopal-Nagpur-Vijayawada, Mumbai-Pune-Chennai, Chennai-Bengaluru ...), each hop's track km
its great-circle km scaled so that the line has its real route km (secondary links `RAIL_FACTOR`
x the great circle). The edges on the shortest paths between the
`HUB_COUNT` largest cities (at most a quarter of the cities) are trunk lines too; routing
counts trunk km `TRUNK_DISCOUNT` less, so trains keep to the corridors. Cities without a
railway (`NO_RAILWAY`: Shillong, Gangtok ...) are not on the graph.

A train runs along a shortest path of that graph and calls at a subset of the cities it passes:
always its two ends, then the largest cities on the way, as many as its type allows (a Rajdhani
about one stop every 300 km, a Mail or Express one every ~130 km, a Passenger every station).
Each train yields one row per (boarding stop, alighting stop) in its direction of travel, with
one timetable per train (arrival and departure at each stop), so every row of a train agrees on
the times at each stop. Every train has a return working (odd/even numbers) with the same name
with the ends swapped: "{first stop} {last stop} {type}".

Which trains run: (0) the named trains travellers know on their routes (`NAMED_TRAINS`: Delhi-Udaipur,
Delhi-Jammu, Kolkata-Puri, Mumbai-Goa ...), (1) one train between every two crowd-data cities within `CORE_PAIR_KM`,
(2) trains between the hubs, as many per pair as a gravity model gives, (3) trains between any
city pairs drawn by a gravity model (population product over distance), so that the metros are
the best connected, (4) branch-line Passenger trains that reach every other city, from it
towards the nearest hub until a city already served, so trains alone connect every city. The
row budget of the profile is met exactly (the last trains are shortened to fit). Run days are
drawn per train at its first stop and shifted at each later stop by the midnights passed before
leaving it (`shift_run_days`). Delay statistics: one right-skewed base delay per train, scaled
by its type (`KIND_DELAY`: Vande Bharat, Shatabdi and Rajdhani less late than Passengers),
growing along the route with the distance to the alighting stop, drawn once per (train,
alighting stop). Fares by the train's fare class and type (`CLASS_FARE`, `TYPE_FARE`) per rail
km. Run times from the type's speed over the rail km: faster on the 130 km/h lines
(`FAST_RAIL_LINES`), slower on secondary links, for every train slower on the ghat and hill
sections (`SLOW_RAIL_SECTIONS`); chair-car day trains only where they arrive within `DAY_TRAIN_MAX_H`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx
import numpy as np

from utp_env.tools.clock import format_hhmm
from utp_env.tools.india import FAST_RAIL_LINES, RAIL_LINES, rail_section_speed
from utp_env.tools.sandbox.common import Columns, lognormal_with_mean, mst_edges, rescale_to_mean, run_days, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.schema import fare_class, shift_run_days

# Track km per great-circle km: secondary and branch lines wind more than the trunk lines; a trunk
# line's hops are scaled so that the line has its real route km (`RAIL_LINES` in tools/india/__init__.py),
# else (a line without a figure, or a profile lacking one of its cities) by the default.
RAIL_FACTOR = 1.3
TRUNK_RAIL_FACTOR = 1.15
# Line speed factors for trains other than Passengers (which stop everywhere at their own pace):
# the 130 km/h routes (`FAST_RAIL_LINES`), the double-track trunk lines, the secondary lines.
FAST_LINE_SPEED = 1.2
SECONDARY_LINE_SPEED = 0.9
# Chair-car day trains (Shatabdi, Vande Bharat) run where they arrive within this many hours (the
# longest real ones: Bhopal Shatabdi 8 h 20, Delhi-Varanasi Vande Bharat 8 h).
DAY_TRAIN_MAX_H = 8.5
NEIGHBOURS = 5
NEIGHBOUR_MAX_KM = 250.0
HUB_COUNT = 40
HUB_TRAINS = 2.2
TRUNK_DISCOUNT = 0.85
CORE_PAIR_KM = 1_600.0
MAX_ROUTE_KM = 3_000.0
MIN_ROUTE_KM = 60.0
MAX_STOPS = 20
BRANCH_MAX_STOPS = 10
DWELL_MIN = 5
HUB_DWELL_MIN = 10
# type -> (average speed km/h between stops on a level trunk line, km between stops, classes); a
# train's fare is quoted for its `fare_class` (tools/schema.py): 3A on sleeper trains, CC on
# chair-car day trains, 2S on Passengers. With halts the averages fall in Indian Railways' ranges
# by category: Vande Bharat 75-95 km/h, Shatabdi 70-85, Rajdhani and Duronto 65-75 (85-90 on the
# fast lines), Superfast 55-60, Mail and Express 45-55, Passenger 30-35.
TRAIN_TYPES: dict[str, tuple[float, float, list[str]]] = {
    "Express": (52.0, 130.0, ["SL", "3A", "2A"]),
    "Superfast Express": (60.0, 180.0, ["SL", "3A", "2A", "1A"]),
    "Mail": (52.0, 130.0, ["SL", "3A", "2A"]),
    "Intercity Express": (52.0, 70.0, ["2S", "CC"]),
    "Passenger": (35.0, 0.0, ["2S"]),
    "Shatabdi Express": (75.0, 160.0, ["CC", "EC"]),
    "Rajdhani Express": (68.0, 300.0, ["3A", "2A", "1A"]),
    "Vande Bharat Express": (80.0, 160.0, ["CC", "EC"]),
    "Duronto Express": (70.0, 400.0, ["SL", "3A", "2A"]),
    "Humsafar Express": (62.0, 220.0, ["3A", "3E"]),
    "Garib Rath Express": (60.0, 200.0, ["3A", "CC"]),
}
# Fare of one class on a Mail/Express: (base INR incl. reservation, INR per km), after Indian
# Railways' published fare tables (rounded): Delhi-Mumbai (1,384 km) 3A about 1,770, SL about 690.
CLASS_FARE: dict[str, tuple[float, float]] = {
    "2S": (15.0, 0.36), "SL": (20.0, 0.48), "CC": (40.0, 1.05), "3E": (40.0, 1.15), "3A": (40.0, 1.25),
    "2A": (50.0, 1.8), "EC": (60.0, 2.1), "1A": (60.0, 3.0),
}
# Train type -> (factor on the class fare, supplement INR): Passenger trains at ordinary fares,
# the superfast charge, and the premium trains' dynamic fares with catering (Rajdhani, Shatabdi,
# Vande Bharat), so Passenger < Express < Superfast < premium on one route and class.
TYPE_FARE: dict[str, tuple[float, float]] = {
    "Passenger": (0.55, 0.0), "Express": (1.0, 0.0), "Mail": (1.0, 0.0), "Intercity Express": (1.0, 0.0),
    "Superfast Express": (1.0, 45.0), "Humsafar Express": (1.15, 45.0), "Garib Rath Express": (0.75, 25.0),
    "Duronto Express": (1.2, 150.0), "Shatabdi Express": (1.5, 150.0), "Rajdhani Express": (1.5, 250.0),
    "Vande Bharat Express": (1.7, 150.0),
}
# How late a train type runs relative to a Mail/Express (the premium trains have priority on the
# line; Passenger trains wait for them): Indian Railways' punctuality by train category, rounded.
KIND_DELAY: dict[str, float] = {
    "Vande Bharat Express": 0.45, "Shatabdi Express": 0.55, "Rajdhani Express": 0.6, "Duronto Express": 0.7,
    "Humsafar Express": 0.85, "Superfast Express": 0.9, "Garib Rath Express": 0.95, "Express": 1.0,
    "Intercity Express": 1.0, "Mail": 1.05, "Passenger": 1.35,
}
STATIONS = {  # real main stations of major cities
    "Mumbai": "Chhatrapati Shivaji Maharaj Terminus", "Delhi": "New Delhi", "Kolkata": "Howrah Junction",
    "Chennai": "Chennai Central", "Bengaluru": "KSR Bengaluru City Junction", "Hyderabad": "Secunderabad Junction",
    "Lucknow": "Lucknow Charbagh", "Kanpur": "Kanpur Central", "Patna": "Patna Junction",
    "Thane": "Thane", "Navi Mumbai": "Vashi", "Visakhapatnam": "Visakhapatnam Junction",
    "Kochi": "Ernakulam Junction", "Thiruvananthapuram": "Thiruvananthapuram Central",
    "Nagpur": "Nagpur Junction", "Bhopal": "Bhopal Junction", "Indore": "Indore Junction",
    "Ahmedabad": "Ahmedabad Junction", "Pune": "Pune Junction", "Jaipur": "Jaipur Junction",
    "Howrah": "Howrah Junction", "Agra": "Agra Cantt", "Surat": "Surat", "Vadodara": "Vadodara Junction",
    "Panaji": "Karmali", "Madgaon": "Madgaon Junction", "Darjeeling": "Darjeeling", "Rishikesh": "Yog Nagari Rishikesh",
}
STATION_SUFFIXES = ("Junction", "Railway Station", "Central", "City", "Cantonment", "Road")
CAPITAL_OF_DELHI = "Delhi"
# Cities without a railway station (Indian Railways' network, 2025): reached by road and air only.
NO_RAILWAY = frozenset({"Shillong", "Gangtok", "Kohima", "Imphal", "Leh", "Manali"})


# Named long-distance trains of Indian Railways on the routes travellers take, each run both ways
# with its real type: (first stop, last stop, type), kept when both ends are in the profile.
NAMED_TRAINS: tuple[tuple[str, str, str], ...] = (
    ("Delhi", "Udaipur", "Superfast Express"),  # Mewar Express
    ("Delhi", "Udaipur", "Express"),  # Chetak Express
    ("Delhi", "Udaipur", "Vande Bharat Express"),
    ("Delhi", "Jammu", "Rajdhani Express"),
    ("Delhi", "Jammu", "Superfast Express"),
    ("Delhi", "Dehradun", "Shatabdi Express"),
    ("Delhi", "Dehradun", "Vande Bharat Express"),
    ("Delhi", "Rishikesh", "Express"),  # Yog Nagari Rishikesh
    ("Kolkata", "Puri", "Shatabdi Express"),
    ("Kolkata", "Puri", "Vande Bharat Express"),
    ("Kolkata", "Puri", "Express"),
    ("Chennai", "Puducherry", "Express"),
    ("Chennai", "Puducherry", "Intercity Express"),
    ("Delhi", "Guwahati", "Rajdhani Express"),
    ("Kolkata", "Guwahati", "Superfast Express"),  # Saraighat Express
    ("Guwahati", "Dibrugarh", "Superfast Express"),
    ("Mumbai", "Panaji", "Vande Bharat Express"),
    ("Mumbai", "Madgaon", "Superfast Express"),  # Konkan Kanya
    ("Delhi", "Panaji", "Rajdhani Express"),
    ("Delhi", "Jaisalmer", "Express"),
    ("Jaipur", "Jaisalmer", "Express"),
    ("Delhi", "Khajuraho", "Express"),
    ("Kolkata", "Darjeeling", "Express"),  # to New Jalpaiguri, then the Darjeeling Himalayan Railway
    ("Delhi", "Varanasi", "Vande Bharat Express"),
    ("Delhi", "Amritsar", "Shatabdi Express"),
    ("Chennai", "Kochi", "Superfast Express"),
)


@dataclass(frozen=True)
class RailNetwork:
    """The rail graph (edge attribute `km`, routing `weight`, `trunk` flag) and its spanning tree."""

    graph: nx.Graph
    tree: nx.Graph
    hubs: list[int]


@dataclass
class Service:
    """One train: the cities it calls at (in order), the rail km to each stop, its type, and the
    cumulative km each stop is away at the type's trunk-line speed (`_Router.hours_km`)."""

    stops: list[int]
    km: np.ndarray
    kind: str
    hours_km: np.ndarray  # cumulative km weighted by 1 / section speed factor (for run times)


def rail_cities(cities: Cities) -> np.ndarray:
    """Indices of the cities with a railway station (all but `NO_RAILWAY`)."""
    return np.array([i for i, name in enumerate(cities.name) if name not in NO_RAILWAY], dtype=np.int64)


def rail_network(cities: Cities, gc: np.ndarray) -> RailNetwork:
    """Nearest-neighbour links plus a spanning tree, with the trunk corridors and the hub-to-hub shortest
    paths marked trunk (edge attributes: `km`, routing `weight`, `trunk`); cities without a
    railway (`NO_RAILWAY`) are left out."""
    rail = rail_cities(cities)
    sub = gc[np.ix_(rail, rail)]
    tree: nx.Graph[int] = nx.Graph()
    tree.add_nodes_from(rail.tolist())
    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(rail.tolist())
    for x, y in mst_edges(sub):
        a, b = int(rail[x]), int(rail[y])
        km = float(gc[a, b] * RAIL_FACTOR)
        tree.add_edge(a, b, weight=km)
        graph.add_edge(a, b, km=km, weight=km, trunk=False)
    for x in range(len(rail)):
        i = int(rail[x])
        for y in np.argsort(sub[x], kind="stable")[1 : NEIGHBOURS + 1].tolist():
            j = int(rail[y])
            if gc[i, j] <= NEIGHBOUR_MAX_KM:
                km = float(gc[i, j] * RAIL_FACTOR)
                graph.add_edge(i, j, km=km, weight=km, trunk=False)
    for _, _, data in graph.edges(data=True):
        data["speed"] = SECONDARY_LINE_SPEED
    index = {name: i for i, name in enumerate(cities.name) if name not in NO_RAILWAY}
    laid: set[frozenset[int]] = set()
    for line, route_km in RAIL_LINES:
        present = [index[c] for c in line if c in index]
        hops = list(itertools.pairwise(present))
        hop_km = sum(float(gc[a, b]) for a, b in hops)
        # the real route km where the line is whole in the profile, else the default detour
        factor = route_km / hop_km if route_km > 0 and len(present) == len(line) else TRUNK_RAIL_FACTOR
        speed = FAST_LINE_SPEED if (line[0], line[-1]) in FAST_RAIL_LINES else 1.0
        for a, b in hops:
            if frozenset((a, b)) in laid:  # a section shared by two lines keeps the first line's km
                continue
            laid.add(frozenset((a, b)))
            km = float(gc[a, b] * factor)
            graph.add_edge(a, b, km=km, weight=km, trunk=True, speed=speed)
    # at most a quarter of the cities are hubs, so that a small profile keeps branch-line trains
    # reaching its other cities
    hubs = rail[np.argsort(-cities.population[rail], kind="stable")[: min(HUB_COUNT, len(rail) // 4)]].tolist()
    for h in hubs:
        paths = nx.single_source_dijkstra_path(graph, h, weight=_routing_km)
        for g in hubs:
            if g > h:
                for a, b in itertools.pairwise(paths[g]):
                    graph.edges[a, b]["trunk"] = True
    for _, _, data in graph.edges(data=True):
        if data["trunk"]:
            data["weight"] = data["km"] * TRUNK_DISCOUNT
    for a, b, data in graph.edges(data=True):
        data["slow"] = rail_section_speed(cities.name[a], cities.name[b])
    return RailNetwork(graph, tree, hubs)


def _routing_km(a: int, b: int, data: dict) -> float:
    """Routing length of an edge while the trunk lines are being found: the named corridors first."""
    return data["km"] * (TRUNK_DISCOUNT if data["trunk"] else 1.0)


class _Router:
    """Cached shortest rail paths (trunk lines preferred)."""

    def __init__(self, network: RailNetwork) -> None:
        self.graph = network.graph
        self.cache: dict[int, dict[int, list[int]]] = {}

    def path(self, a: int, b: int) -> list[int]:
        if a not in self.cache:
            self.cache[a] = nx.single_source_dijkstra_path(self.graph, a, weight="weight")
        return self.cache[a][b]

    def km(self, path: list[int]) -> np.ndarray:
        """Cumulative rail km along a path."""
        seg = [self.graph.edges[a, b]["km"] for a, b in itertools.pairwise(path)]
        return np.concatenate([[0.0], np.cumsum(seg)])

    def hours_km(self, path: list[int], kind: str) -> np.ndarray:
        """Cumulative km along a path for a `kind` train, each section divided by its speed factors:
        the ghat and hill sections' (`SLOW_RAIL_SECTIONS`) for every train, the line's (fast,
        trunk or secondary) for every train but a Passenger; divided by the type's speed, hours."""
        edges = self.graph.edges
        line = kind != "Passenger"
        seg = [edges[a, b]["km"] / (edges[a, b]["slow"] * (edges[a, b]["speed"] if line else 1.0))
               for a, b in itertools.pairwise(path)]
        return np.concatenate([[0.0], np.cumsum(seg)])

    def day_train_hours(self, path: list[int]) -> float:
        """Hours a Shatabdi (the slower chair-car day train) takes over `path` without halts."""
        return float(self.hours_km(path, "Shatabdi Express")[-1]) / TRAIN_TYPES["Shatabdi Express"][0]


def _kind_of(cities: Cities, a: int, b: int, km: float, day_hours: float, rng: np.random.Generator) -> str:
    """A train type that fits the route: Rajdhanis to Delhi, day trains between big cities where
    they arrive within `DAY_TRAIN_MAX_H` (`day_hours`: a Shatabdi's hours without halts)."""
    big = min(cities.population[a], cities.population[b])
    r = float(rng.random())
    if km <= 250:
        return "Intercity Express" if r < 0.6 else "Passenger"
    if day_hours <= DAY_TRAIN_MAX_H and big >= 1_000_000 and r < 0.45:
        return "Vande Bharat Express" if r < 0.2 else "Shatabdi Express"
    if km >= 700 and CAPITAL_OF_DELHI in (cities.name[a], cities.name[b]) and r < 0.4:
        return "Rajdhani Express"
    if km >= 900 and big >= 1_000_000 and r < 0.2:
        return "Duronto Express"
    if km <= 600:
        return ("Intercity Express", "Express", "Superfast Express", "Mail")[int(rng.integers(0, 4))]
    return ("Express", "Superfast Express", "Mail", "Humsafar Express", "Garib Rath Express",
            "Express", "Superfast Express")[int(rng.integers(0, 7))]


def _make_service(cities: Cities, router: _Router, path: list[int], kind: str, max_stops: int,
                  rng: np.random.Generator) -> Service:
    """Call at the ends and the largest cities on the way, as many as the type allows."""
    cum = router.km(path)
    spacing = TRAIN_TYPES[kind][1]
    inner = np.arange(1, len(path) - 1)
    if spacing <= 0:
        want = len(inner)
    else:
        want = round(float(cum[-1]) / spacing * rng.uniform(0.75, 1.25)) - 1
    want = max(0, min(want, len(inner), max_stops - 2))
    if want < len(inner):
        score = cities.population[np.asarray(path)[inner]] * rng.lognormal(0.0, 0.8, len(inner))
        inner = np.sort(inner[np.argsort(-score, kind="stable")[:want]])
    idx = np.concatenate([[0], inner, [len(path) - 1]]).astype(np.int64)
    return Service([path[i] for i in idx.tolist()], cum[idx], kind, router.hours_km(path, kind)[idx])


def _shortened(service: Service, k: int) -> Service:
    """Keep the ends and the first k - 2 intermediate stops."""
    idx = [*range(k - 1), len(service.stops) - 1]
    return Service([service.stops[i] for i in idx], service.km[idx], service.kind, service.hours_km[idx])


def plan_services(cities: Cities, gc: np.ndarray, profile: SandboxProfile, rng: np.random.Generator,
                  core: list[int]) -> list[Service]:
    """The profile's trains as services whose rows (k * (k - 1) per train and return) sum to `profile.trains`."""
    network = rail_network(cities, gc)
    router = _Router(network)
    budget = profile.trains
    services: list[Service] = []

    def add(service: Service) -> bool:
        nonlocal budget
        k = len(service.stops)
        while k > 2 and k * (k - 1) > budget:
            k -= 1
        if k * (k - 1) > budget:
            return False
        services.append(service if k == len(service.stops) else _shortened(service, k))
        budget -= k * (k - 1)
        return True

    # (3) first work out the branch lines so that their rows are reserved
    branch = _branch_services(cities, router, network, rng)
    reserve = sum(len(s.stops) * (len(s.stops) - 1) for s in branch)
    if reserve > budget:
        raise ValueError(f"profile {profile.name!r}: trains={profile.trains} is below the {reserve} rows "
                         "the branch-line trains need")
    budget -= reserve
    # (0) the named trains
    index = {name: i for i, name in enumerate(cities.name)}
    for first, last, kind in NAMED_TRAINS:
        a, b = index.get(first), index.get(last)
        if a is not None and b is not None and a in network.graph and b in network.graph and budget > 0:
            add(_make_service(cities, router, router.path(a, b), kind, MAX_STOPS, rng))
    # (1) one train between every two crowd-data cities within CORE_PAIR_KM
    core = [c for c in core if c in network.graph]
    for x, a in enumerate(core):
        for b in core[x + 1 :]:
            if gc[a, b] <= CORE_PAIR_KM and budget > 0:
                path = router.path(a, b) if rng.random() < 0.5 else router.path(b, a)[::-1]
                km = float(router.km(path)[-1])
                kind = _kind_of(cities, a, b, km, router.day_train_hours(path), rng)
                if kind == "Passenger":
                    kind = "Intercity Express"
                add(_make_service(cities, router, path, kind, MAX_STOPS, rng))
    # (2a) trains between the hubs, as many as a gravity model gives (Delhi-Mumbai ~20 each way)
    pop = cities.population.astype(float) / 1e6
    hubs = network.hubs
    for x, a in enumerate(hubs):
        for b in hubs[x + 1 :]:
            if not MIN_ROUTE_KM <= gc[a, b] * RAIL_FACTOR <= MAX_ROUTE_KM / 1.15:
                continue
            expected = HUB_TRAINS * (pop[a] * pop[b]) ** 0.6 / (gc[a, b] / 100.0) ** 0.3
            for _ in range(int(np.floor(expected + rng.random()))):
                s, t = (a, b) if rng.random() < 0.5 else (b, a)
                path = router.path(s, t)
                km = float(router.km(path)[-1])
                if km <= MAX_ROUTE_KM and budget > 0:
                    kind = _kind_of(cities, s, t, km, router.day_train_hours(path), rng)
                    add(_make_service(cities, router, path, kind, MAX_STOPS, rng))
    # (2b) gravity-model trains between any city pairs
    n = cities.n
    iu, ju = np.triu_indices(n, 1)
    d = gc[iu, ju]
    on_rail = np.zeros(n, dtype=bool)
    on_rail[rail_cities(cities)] = True
    ok = (d * RAIL_FACTOR >= MIN_ROUTE_KM) & (d * RAIL_FACTOR <= MAX_ROUTE_KM / 1.15) & on_rail[iu] & on_rail[ju]
    iu, ju, d = iu[ok], ju[ok], d[ok]
    draw = cities.draw.astype(float) / 1e6  # visitors count for tourist places (Goa, Rishikesh ...)
    weight = (draw[iu] * draw[ju]) ** 0.85 / d**0.9
    weight /= weight.sum()
    while budget > 0:
        draws = rng.choice(len(iu), 512, p=weight)
        for k in draws.tolist():
            if budget <= 0:
                break
            a, b = (int(iu[k]), int(ju[k])) if rng.random() < 0.5 else (int(ju[k]), int(iu[k]))
            path = router.path(a, b)
            km = float(router.km(path)[-1])
            if km > MAX_ROUTE_KM:
                continue
            add(_make_service(cities, router, path, _kind_of(cities, a, b, km, router.day_train_hours(path), rng),
                              MAX_STOPS, rng))
    return branch + services


def _branch_services(cities: Cities, router: _Router, network: RailNetwork,
                     rng: np.random.Generator) -> list[Service]:
    """Passenger trains from every city that is not a hub towards the nearest hub, each ending
    where an earlier one already calls (so together with the hub trains they connect every
    city); a long way is cut into trains of at most `BRANCH_MAX_STOPS` stops."""
    covered = set(network.hubs)
    dist, paths = nx.multi_source_dijkstra(network.graph, set(network.hubs), weight="weight")
    assert isinstance(dist, dict) and isinstance(paths, dict)  # no target given: every node's distance and path
    order = sorted((v for v in network.graph if v not in covered), key=lambda v: (-dist[v], v))
    out = []
    for v in order:
        if v in covered:
            continue
        to_hub = paths[v][::-1]  # from v towards its hub
        path = [to_hub[0]]
        for node in to_hub[1:]:
            path.append(node)
            if node in covered:
                break
        covered.update(path)
        for start in range(0, len(path) - 1, BRANCH_MAX_STOPS - 1):
            piece = path[start : start + BRANCH_MAX_STOPS]
            if len(piece) >= 2:
                out.append(Service(piece, router.km(piece), "Passenger", router.hours_km(piece, "Passenger")))
    return out


def train_fare(kind: str, km: np.ndarray) -> np.ndarray:
    """Fare per person (INR, rounded to 5) of a `kind` train over `km` in its fare class."""
    base, per_km = CLASS_FARE[fare_class(TRAIN_TYPES[kind][2])]
    factor, extra = TYPE_FARE[kind]
    return np.round(((base + per_km * np.asarray(km, float)) * factor + extra) / 5.0) * 5.0


def fare_km(kind: str, fare: np.ndarray) -> np.ndarray:
    """The rail km a `kind` train's fare is quoted for (the inverse of `train_fare`, to within its
    rounding to 5 INR): fares are per km, so the trains table tells its track km."""
    base, per_km = CLASS_FARE[fare_class(TRAIN_TYPES[kind][2])]
    factor, extra = TYPE_FARE[kind]
    return ((np.asarray(fare, float) - extra) / factor - base) / per_km


def _station_names(cities: Cities, rng: np.random.Generator) -> list[str]:
    pick = rng.integers(0, len(STATION_SUFFIXES), cities.n)
    return [STATIONS.get(c, f"{c} {STATION_SUFFIXES[k]}") for c, k in zip(cities.name, pick.tolist(), strict=True)]


def _departure(kind: str, km: float, rng: np.random.Generator) -> int:
    """Departure minute: day trains leave in the morning, long-distance trains mostly in the evening."""
    if kind in ("Shatabdi Express", "Vande Bharat Express"):
        return int(rng.integers(5 * 12, 16 * 12)) * 5
    if kind in ("Rajdhani Express", "Duronto Express") or (km > 500 and rng.random() < 0.6):
        return int(rng.integers(15 * 12, 23 * 12 + 6)) * 5
    return int(rng.integers(0, 288)) * 5


def trains_table(cities: Cities, gc: np.ndarray, profile: SandboxProfile, seed: int,
                 core: list[int] | None = None) -> Columns:
    """Exactly `profile.trains` rows from the planned services and their return workings."""
    rng = stage_rng(seed, "trains")
    services = plan_services(cities, gc, profile, rng, list(core or []))
    stations = _station_names(cities, rng)
    numbers = rng.permutation(np.arange(10001, 30000, 2))
    if len(services) > len(numbers):
        raise ValueError(f"profile {profile.name!r}: too many trains ({2 * len(services)}) for 5-digit numbers")
    hub = cities.population >= 1_000_000
    names = np.array(cities.name, dtype=object)
    stations_arr = np.array(stations, dtype=object)
    parts: dict[str, list] = {k: [] for k in ("number", "name", "o", "d", "dep", "arr", "km", "days",
                                             "kind", "delay", "stop", "fare")}
    stop_key = 0  # one key per (train, alighting stop): its delay statistics are drawn once
    base_delays = lognormal_with_mean(rng, 1.0, profile.calibration.lognormal_sigma, 2 * len(services))
    for r, service in enumerate(services):
        for direction in (0, 1):
            stops = np.asarray(service.stops if direction == 0 else service.stops[::-1])
            cum = service.km if direction == 0 else service.km[-1] - service.km[::-1]
            hours_km = service.hours_km if direction == 0 else service.hours_km[-1] - service.hours_km[::-1]
            k = len(stops)
            speed = TRAIN_TYPES[service.kind][0] * rng.uniform(0.9, 1.1)
            run = np.round(np.diff(hours_km) / speed * 60.0 / 5.0).astype(np.int64) * 5 + 5
            dwell = np.where(hub[stops], HUB_DWELL_MIN, DWELL_MIN)
            dwell[0] = dwell[-1] = 0
            start = _departure(service.kind, float(cum[-1]), rng)
            arrive = start + np.concatenate([[0], np.cumsum(run + dwell[:-1])])
            depart = arrive + dwell
            i, j = np.triu_indices(k, 1)
            parts["number"].append(np.full(len(i), int(numbers[r]) + direction))
            parts["name"].append(np.full(len(i), f"{cities.name[stops[0]]} {cities.name[stops[-1]]} {service.kind}",
                                         dtype=object))
            parts["o"].append(stops[i])
            parts["d"].append(stops[j])
            parts["dep"].append(depart[i])
            parts["arr"].append(arrive[j])
            parts["km"].append(cum[j] - cum[i])
            # run days at the first stop; a stop left after midnight is left on the following day(s)
            days = run_days(rng, 1, 0.55)[0]
            shifted = np.array([shift_run_days(days, int(m // 1440)) for m in depart.tolist()], dtype=object)
            parts["days"].append(shifted[i])
            parts["kind"].append(np.full(len(i), service.kind, dtype=object))
            parts["fare"].append(train_fare(service.kind, cum[j] - cum[i]))
            # delays build up along the route: more at stops further from the start; one
            # delay per alighting stop, whichever stop the traveller boarded at
            parts["delay"].append(base_delays[2 * r + direction] * KIND_DELAY[service.kind]
                                  * (0.5 + 1.0 * cum[j] / max(cum[-1], 1.0)))
            parts["stop"].append(stop_key + j)
            stop_key += k
    cat = {k: np.concatenate(v) for k, v in parts.items()}
    dep, arr = cat["dep"].astype(np.int64), cat["arr"].astype(np.int64)
    classes = {kind: spec[2] for kind, spec in TRAIN_TYPES.items()}
    clock = np.array([format_hhmm(m) for m in range(1440)], dtype=object)
    cols: Columns = {
        "train_number": [f"{x:05d}" for x in cat["number"].tolist()],
        "train_name": cat["name"].tolist(),
        "origin_city": names[cat["o"]].tolist(),
        "dest_city": names[cat["d"]].tolist(),
        "origin_station": stations_arr[cat["o"]].tolist(),
        "dest_station": stations_arr[cat["d"]].tolist(),
        "dep_time": clock[dep % 1440].tolist(),
        "arr_time": clock[arr % 1440].tolist(),
        "arr_day_offset": (arr // 1440 - dep // 1440).tolist(),
        "duration_min": (arr - dep).tolist(),
        "run_days": cat["days"].tolist(),
        "classes": [classes[k] for k in cat["kind"].tolist()],
        "fare_inr": cat["fare"].astype(np.int64).tolist(),
    }
    cols.update(_delay_columns(cat["delay"], cat["stop"].astype(np.int64), stop_key, profile, rng))
    return cols


def _delay_columns(base: np.ndarray, stop: np.ndarray, n_stops: int, profile: SandboxProfile,
                   rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The five delay horizons: the row's base delay with horizon noise, each column calibrated
    to its own target mean (spread over the paper's range); ~6% of (train, alighting stop) pairs
    carry no statistics. The noise and the gaps are drawn per (train, alighting stop) `stop`
    key, so every row alighting at one stop of one train has the same statistics."""
    missing = (rng.random(n_stops) < 0.06)[stop]
    out = {}
    for col, target in profile.calibration.train_horizon_means_min.items():
        values = base * rng.lognormal(0.0, 0.25, n_stops)[stop]
        values[missing] = np.nan
        out[col] = np.round(rescale_to_mean(values, target), 1)
    return out
