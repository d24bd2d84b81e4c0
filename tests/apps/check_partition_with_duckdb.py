"""An independent check of `spillway partition` output, with DuckDB.

Usage: check_partition_with_duckdb.py KEY INPUT_GLOB OUTPUT_DIR [OTHER_OUTPUT_DIR]

Reads the input files and the partition files (`part-*.parquet` or
`part-*.csv`, or any Parquet files beneath OUTPUT_DIR, a directory being a
partition where files are in directories of their own) with DuckDB and checks that the output holds the same multiset
of rows as the input, that no key value is split across files, and, given a
second output directory of another table split by the same key, that every
key value the two share is in files of the same name (less the extension) in
both. Prints what it found; exits 1 on any failure.
"""

import pathlib
import sys

import duckdb


def scan(path_glob: str, as_text: bool = True) -> str:
    """A DuckDB table function reading the files of `path_glob`, with their names; CSV fields as text
    unless `as_text` is false (CSV compared with Parquet is read with the types DuckDB detects)."""
    if path_glob.endswith(".parquet"):
        return f"read_parquet('{path_glob}', filename = true)"
    return f"read_csv('{path_glob}', filename = true, header = true, all_varchar = {str(as_text).lower()})"


def output_glob(directory: str) -> str:
    """The partition files of `directory`, Parquet or CSV (DuckDB reads no Arrow IPC): `part-*` files, or
    other tools' layouts: any Parquet files in it, or else in directories beneath it (one per partition)."""
    for extension in ("parquet", "csv"):
        if list(pathlib.Path(directory).glob(f"part-*.{extension}")):
            return f"{directory}/part-*.{extension}"
    if list(pathlib.Path(directory).glob("*.parquet")):
        return f"{directory}/*.parquet"
    if list(pathlib.Path(directory).rglob("*.parquet")):
        return f"{directory}/*/**/*.parquet"
    sys.exit(f"no part-*.parquet or part-*.csv files, nor Parquet files, in or beneath {directory}")


def main() -> None:
    key, input_glob, output_dir = sys.argv[1:4]
    other_dir = sys.argv[4] if len(sys.argv) > 4 else None
    db = duckdb.connect()
    out_glob = output_glob(output_dir)
    as_text = not out_glob.endswith(".parquet")
    db.execute(f"create view input as select * exclude (filename) from {scan(input_glob, as_text)}")
    # A partition is a file, or, where the files are in directories of their own, a directory.
    partition = "parse_dirpath(filename)" if "/*/" in out_glob else "filename"
    db.execute(f"create view output as select * exclude (filename), {partition} as filename from {scan(out_glob)}")
    columns = ", ".join(f'"{column[0]}"' for column in db.execute("select * from input limit 0").description)
    missing = db.execute(
        f"select count(*) from (select {columns} from input except all select {columns} from output)").fetchone()[0]
    extra = db.execute(
        f"select count(*) from (select {columns} from output except all select {columns} from input)").fetchone()[0]
    split = db.execute(
        f'select count(*) from (select "{key}" from output group by "{key}" having count(distinct filename) > 1)'
    ).fetchone()[0]
    rows = db.execute("select count(*) from output").fetchone()[0]
    print(f"rows {rows}, missing {missing}, extra {extra}, keys split across files {split}")
    failed = missing != 0 or extra != 0 or split != 0 or rows == 0
    if other_dir is not None:
        db.execute(f"create view other as select * from {scan(output_glob(other_dir))}")
        misplaced = db.execute(
            f'select count(*) from (select distinct "{key}", parse_filename(filename, true) as file from output) a '
            f'join (select distinct "{key}", parse_filename(filename, true) as file from other) b '
            f'on a."{key}"::varchar = b."{key}"::varchar where a.file <> b.file').fetchone()[0]
        shared = db.execute(
            f'select count(*) from (select distinct "{key}"::varchar as k from output) a '
            f'join (select distinct "{key}"::varchar as k from other) b on a.k = b.k').fetchone()[0]
        print(f"keys in both tables {shared}, in differently named files {misplaced}")
        failed = failed or misplaced != 0 or shared == 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
