"""TPC-H answers from DuckDB, and spillway's checked against them.

Usage:
  tpch_duckdb.py check --spillway BIN --query N --scale S [--work DIR] [--launcher CMD] [-- TPCH_ARGS...]
      Writes the eight tables with `spillway generate --tables all` (kept in
      DIR/tables-<scale> for later runs), runs query N's TPC-H SQL on them in
      DuckDB and `spillway tpch --query N --json TPCH_ARGS...`, and compares
      the answers: the same columns, the same rows in the same order,
      integers, strings and dates equal, decimals within a relative 1e-9
      (spillway sums float64, DuckDB DECIMAL(15,2) exactly). Exits 1 if they
      differ, printing both. --launcher runs spillway under a command, such
      as "mpiexec -np 2" (with TPCH_ARGS --comm mpi).
  tpch_duckdb.py tables --spillway BIN --scale S [--work DIR] [--format parquet]
      Writes the eight tables into DIR/tables-<scale> afresh (.tbl files),
      or as Parquet into DIR/parquet-<scale>.
  tpch_duckdb.py answer --tables DIR --query N
      Prints DuckDB's answer over the .tbl files in DIR as JSON.
  tpch_duckdb.py time --parquet DIR --query N --threads T --memory-limit L [--answer FILE]
      Runs query N in DuckDB over DIR/<table>.parquet, read at query time
      (views, nothing loaded before), with T threads and a memory limit of
      L; prints "seconds S" (the query alone, in this process) and writes
      the answer as JSON to FILE.
  tpch_duckdb.py compare EXPECTED ACTUAL
      Compares two answers (JSON files with "columns" and "rows", such as
      `spillway tpch --json` prints) as `check` does; exits 1 if they differ.

The SQL is the TPC-H specification's, with its validation parameters.
"""

import argparse
import json
import math
import pathlib
import shlex
import shutil
import subprocess
import sys
import time

import duckdb

# The columns of each table, as `spillway generate` writes them; money,
# quantities and rates are DECIMAL(15,2), as the specification has them.
COLUMNS = {
    "part": "p_partkey BIGINT, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR, p_type VARCHAR, p_size INTEGER, "
    "p_container VARCHAR, p_retailprice DECIMAL(15,2), p_comment VARCHAR",
    "supplier": "s_suppkey BIGINT, s_name VARCHAR, s_address VARCHAR, s_nationkey BIGINT, s_phone VARCHAR, "
    "s_acctbal DECIMAL(15,2), s_comment VARCHAR",
    "partsupp": "ps_partkey BIGINT, ps_suppkey BIGINT, ps_availqty INTEGER, ps_supplycost DECIMAL(15,2), "
    "ps_comment VARCHAR",
    "customer": "c_custkey BIGINT, c_name VARCHAR, c_address VARCHAR, c_nationkey BIGINT, c_phone VARCHAR, "
    "c_acctbal DECIMAL(15,2), c_mktsegment VARCHAR, c_comment VARCHAR",
    "orders": "o_orderkey BIGINT, o_custkey BIGINT, o_orderstatus VARCHAR, o_totalprice DECIMAL(15,2), "
    "o_orderdate DATE, o_orderpriority VARCHAR, o_clerk VARCHAR, o_shippriority INTEGER, o_comment VARCHAR",
    "lineitem": "l_orderkey BIGINT, l_partkey BIGINT, l_suppkey BIGINT, l_linenumber INTEGER, "
    "l_quantity DECIMAL(15,2), l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2), l_tax DECIMAL(15,2), "
    "l_returnflag VARCHAR, l_linestatus VARCHAR, l_shipdate DATE, l_commitdate DATE, l_receiptdate DATE, "
    "l_shipinstruct VARCHAR, l_shipmode VARCHAR, l_comment VARCHAR",
    "nation": "n_nationkey BIGINT, n_name VARCHAR, n_regionkey BIGINT, n_comment VARCHAR",
    "region": "r_regionkey BIGINT, r_name VARCHAR, r_comment VARCHAR",
}

QUERIES = {
    1: """
select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
       avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc,
       count(*) as count_order
from lineitem
where l_shipdate <= date '1998-12-01' - interval '90' day
group by l_returnflag, l_linestatus
order by l_returnflag, l_linestatus""",
    3: """
select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
from customer, orders, lineitem
where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey
  and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15'
group by l_orderkey, o_orderdate, o_shippriority
order by revenue desc, o_orderdate
limit 10""",
    4: """
select o_orderpriority, count(*) as order_count
from orders
where o_orderdate >= date '1993-07-01' and o_orderdate < date '1993-07-01' + interval '3' month
  and exists (select * from lineitem where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
group by o_orderpriority
order by o_orderpriority""",
    5: """
select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
from customer, orders, lineitem, supplier, nation, region
where c_custkey = o_custkey and l_orderkey = o_orderkey and l_suppkey = s_suppkey
  and c_nationkey = s_nationkey and s_nationkey = n_nationkey and n_regionkey = r_regionkey
  and r_name = 'ASIA' and o_orderdate >= date '1994-01-01' and o_orderdate < date '1994-01-01' + interval '1' year
group by n_name
order by revenue desc""",
    7: """
select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
  select n1.n_name as supp_nation, n2.n_name as cust_nation, extract(year from l_shipdate) as l_year,
         l_extendedprice * (1 - l_discount) as volume
  from supplier, lineitem, orders, customer, nation n1, nation n2
  where s_suppkey = l_suppkey and o_orderkey = l_orderkey and c_custkey = o_custkey
    and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey
    and ((n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY') or (n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE'))
    and l_shipdate between date '1995-01-01' and date '1996-12-31'
) as shipping
group by supp_nation, cust_nation, l_year
order by supp_nation, cust_nation, l_year""",
    9: """
select nation, o_year, sum(amount) as sum_profit
from (
  select n_name as nation, extract(year from o_orderdate) as o_year,
         l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
  from part, supplier, lineitem, partsupp, orders, nation
  where s_suppkey = l_suppkey and ps_suppkey = l_suppkey and ps_partkey = l_partkey and p_partkey = l_partkey
    and o_orderkey = l_orderkey and s_nationkey = n_nationkey and p_name like '%green%'
) as profit
group by nation, o_year
order by nation, o_year desc""",
    18: """
select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
from customer, orders, lineitem
where o_orderkey in (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300)
  and c_custkey = o_custkey and o_orderkey = l_orderkey
group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
order by o_totalprice desc, o_orderdate
limit 100""",
    21: """
select s_name, count(*) as numwait
from supplier, lineitem l1, orders, nation
where s_suppkey = l1.l_suppkey and o_orderkey = l1.l_orderkey and o_orderstatus = 'F'
  and l1.l_receiptdate > l1.l_commitdate
  and exists (select * from lineitem l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
  and not exists (select * from lineitem l3 where l3.l_orderkey = l1.l_orderkey
                  and l3.l_suppkey <> l1.l_suppkey and l3.l_receiptdate > l3.l_commitdate)
  and s_nationkey = n_nationkey and n_name = 'SAUDI ARABIA'
group by s_name
order by numwait desc, s_name
limit 100""",
}


def connect(tables: pathlib.Path):
    """A DuckDB connection with a view of each table's .tbl file in `tables`."""
    db = duckdb.connect()
    for name, columns in COLUMNS.items():
        types = ", ".join(f"'{c.split()[0]}': '{' '.join(c.split()[1:])}'" for c in columns.split(", "))
        db.execute(
            f"create view {name} as select * from read_csv('{tables / (name + '.tbl')}', delim = '|', "
            f"header = false, quote = '', escape = '', columns = {{{types}}}, new_line = '\\n')"
        )
    return db


def connect_parquet(tables: pathlib.Path, threads: int, memory_limit: str):
    """A DuckDB connection with `threads` threads and `memory_limit`, and a
    view of each table's Parquet file in `tables`."""
    db = duckdb.connect(config={"threads": threads, "memory_limit": memory_limit})
    for name in COLUMNS:
        db.execute(f"create view {name} as select * from read_parquet('{tables / (name + '.parquet')}')")
    return db


def duckdb_answer(db, query: int) -> dict:
    """DuckDB's answer to `query`: its columns, and its rows as JSON values."""
    result = db.execute(QUERIES[query])
    columns = [d[0] for d in result.description]
    rows = [[to_json(v) for v in row] for row in result.fetchall()]
    return {"columns": columns, "rows": rows}


def to_json(value):
    """A DuckDB value as spillway's JSON writes it: numbers, strings, dates as YYYY-MM-DD."""
    if value is None or isinstance(value, (int, str)):
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return float(value)


def same(a, b) -> bool:
    """Whether two answer values agree: numbers within a relative 1e-9, others equal."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)
    return a == b


def compare(expected: dict, actual: dict) -> list[str]:
    """What differs between DuckDB's answer and spillway's; empty if nothing does."""
    problems = []
    if expected["columns"] != actual["columns"]:
        problems.append(f"columns: DuckDB {expected['columns']}, spillway {actual['columns']}")
    if len(expected["rows"]) != len(actual["rows"]):
        problems.append(f"rows: DuckDB {len(expected['rows'])}, spillway {len(actual['rows'])}")
    for index, (want, got) in enumerate(zip(expected["rows"], actual["rows"])):
        if len(want) != len(got) or not all(same(w, g) for w, g in zip(want, got)):
            problems.append(f"row {index}: DuckDB {want}, spillway {got}")
    return problems


def generate(spillway: str, scale: str, work: pathlib.Path, afresh: bool = False, file_format: str = "csv") -> pathlib.Path:
    """The directory of the eight tables at `scale` (.tbl files, or Parquet), generated unless there already (or `afresh`)."""
    parquet = file_format == "parquet"
    tables = work / (f"parquet-{scale}" if parquet else f"tables-{scale}")
    if afresh:
        shutil.rmtree(tables, ignore_errors=True)
    if not (tables / ("region.parquet" if parquet else "region.tbl")).exists():
        subprocess.run([spillway, "generate", "--tables", "all", "--scale", scale, "-o", str(tables), "--quiet",
                        "--output-format", file_format], check=True)
    return tables


def check(arguments) -> int:
    work = pathlib.Path(arguments.work)
    work.mkdir(parents=True, exist_ok=True)
    tables = generate(arguments.spillway, arguments.scale, work)
    expected = duckdb_answer(connect(tables), arguments.query)
    run = subprocess.run(
        [*shlex.split(arguments.launcher), arguments.spillway, "tpch", "--query", str(arguments.query), "--scale", arguments.scale, "--json",
         "--quiet", *arguments.tpch_args],
        capture_output=True, text=True)
    if run.returncode != 0:
        print(f"spillway tpch exited {run.returncode}:\n{run.stderr}{run.stdout}")
        return 1
    actual = json.loads(run.stdout)
    problems = compare(expected, actual)
    print(f"TPC-H Q{arguments.query} at scale {arguments.scale} ({' '.join(arguments.tpch_args)}): "
          f"{len(actual['rows'])} rows, spilled {actual['spilled_bytes']} bytes")
    for problem in problems:
        print(problem)
    print("answers agree with DuckDB" if not problems else "ANSWERS DIFFER FROM DuckDB")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    check_parser = commands.add_parser("check")
    check_parser.add_argument("--spillway", required=True)
    check_parser.add_argument("--query", type=int, required=True)
    check_parser.add_argument("--scale", required=True)
    check_parser.add_argument("--work", default="tpch-work")
    check_parser.add_argument("--launcher", default="")
    check_parser.add_argument("tpch_args", nargs="*")
    tables_parser = commands.add_parser("tables")
    tables_parser.add_argument("--spillway", required=True)
    tables_parser.add_argument("--scale", required=True)
    tables_parser.add_argument("--work", default="tpch-work")
    tables_parser.add_argument("--format", default="csv", choices=["csv", "parquet"])
    time_parser = commands.add_parser("time")
    time_parser.add_argument("--parquet", required=True)
    time_parser.add_argument("--query", type=int, required=True)
    time_parser.add_argument("--threads", type=int, required=True)
    time_parser.add_argument("--memory-limit", required=True)
    time_parser.add_argument("--answer")
    compare_parser = commands.add_parser("compare")
    compare_parser.add_argument("expected")
    compare_parser.add_argument("actual")
    answer_parser = commands.add_parser("answer")
    answer_parser.add_argument("--tables", required=True)
    answer_parser.add_argument("--query", type=int, required=True)
    arguments = parser.parse_args()
    if arguments.command == "check":
        return check(arguments)
    if arguments.command == "tables":
        generate(arguments.spillway, arguments.scale, pathlib.Path(arguments.work), afresh=True,
                 file_format=arguments.format)
        return 0
    if arguments.command == "time":
        db = connect_parquet(pathlib.Path(arguments.parquet), arguments.threads, arguments.memory_limit)
        started = time.perf_counter()
        answer = duckdb_answer(db, arguments.query)
        print(f"seconds {time.perf_counter() - started:.4f}")
        if arguments.answer:
            pathlib.Path(arguments.answer).write_text(json.dumps(answer))
        return 0
    if arguments.command == "compare":
        def answer_in(path):  # the file's first line that is a JSON object
            return json.loads(next(line for line in pathlib.Path(path).read_text().splitlines() if line.startswith("{")))
        problems = compare(answer_in(arguments.expected), answer_in(arguments.actual))
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    print(json.dumps(duckdb_answer(connect(pathlib.Path(arguments.tables)), arguments.query)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
