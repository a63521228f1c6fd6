"""Geography lookups: the cities of a state and the road distance between two cities."""

from __future__ import annotations

from pydantic import Field

from utp_env.tools.database import Database
from utp_env.tools.errors import UnknownNameError
from utp_env.tools.lookup.common import Args, Name, Paged, lookup_tool, pair_of
from utp_env.tools.lookup.render import page, table_text
from utp_env.tools.toolkit import ToolError, ToolResult


class DistanceQuery(Args):
    origin: Name = Field(description="Start city, e.g. 'Jaipur'")
    destination: Name = Field(description="End city, e.g. 'Udaipur'")


@lookup_tool
def distance(db: Database, args: DistanceQuery) -> ToolResult:
    """Road distance and driving time between two cities.

    Returns distance (km), driving time (minutes) and the fare of one cab (INR, up to 4 people).
    Use it to judge how far apart cities are when ordering a multi-city route; use cab_route to
    check whether a cab actually serves the pair. Example: {"origin": "Jaipur", "destination": "Udaipur"}
    """
    origin, dest = pair_of(db, args.origin, args.destination)
    rows = db.pair_rows("distances", origin, dest)
    if not rows.size:
        return ToolResult(ok=True, text=f"Distance from {origin} to {dest}: no results. The database holds no "
                                        "distance for this pair; try cab_route or the scheduled modes.")
    table = db.tables["distances"]
    row = table.row(int(rows[0]))
    text = table_text(f"Distance from {origin} to {dest}", ["distance_km", "drive_min", "cab_fare_inr"],
                      [[row["distance_km"], row["duration_min"], row["cab_fare_inr"]]],
                      total=1, truncated=0, narrow="", empty="")
    return ToolResult(ok=True, text=text, rows=[row])


class CityList(Paged):
    state: Name = Field(description="State or union territory, e.g. 'Kerala' or 'Delhi'")


@lookup_tool
def list_cities(db: Database, args: CityList) -> ToolResult:
    """List the cities of a state or union territory, most populous first.

    Returns city, population, coordinates and whether crowd data exists for its venues.
    Use it to pick the cities to visit when a query names a state.
    Example: {"state": "Gujarat"}
    """
    try:
        names = db.cities_of_state(args.state)
    except UnknownNameError as exc:
        raise ToolError(str(exc), "state") from None
    table = db.tables["cities"]
    rows = [row for n in names if (row := table.find(n)) is not None]  # every name comes from the table
    shown, cut = page(rows, args.limit)
    out = table.rows(shown)
    state = out[0]["state"] if out else args.state
    text = table_text(f"Cities of {state}", ["city", "population", "latitude", "longitude", "crowd_data"],
                      [[r["city"], r["population"], f"{r['latitude']:.4f}", f"{r['longitude']:.4f}",
                        "yes" if r["has_crowd_data"] else "no"] for r in out],
                      total=len(rows), truncated=cut, narrow="raise limit (max 100) to see more.",
                      empty="Check the state's spelling.")
    return ToolResult(ok=True, text=text, rows=out, truncated=cut)
