// The DuckDB side of bench_partition.sh: the same repartition with DuckDB,
// timed inside the process (so node's start-up is not counted against it).
// Usage: node duckdb_partition.mjs INPUT OUTPUT_DIR KEY PARTITIONS MEMORY_LIMIT THREADS
// Prints `seconds S`.
import { DuckDBInstance } from '@duckdb/node-api';

const [input, output, key, partitions, memoryLimit, threads] = process.argv.slice(2);
const instance = await DuckDBInstance.create(':memory:', { memory_limit: memoryLimit, threads: threads });
const connection = await instance.connect();
const start = process.hrtime.bigint();
await connection.run(
  `COPY (SELECT *, hash(${key}) % ${partitions} AS p FROM read_csv('${input}')) ` +
  `TO '${output}' (FORMAT csv, PARTITION_BY (p))`);
console.log(`seconds ${Number(process.hrtime.bigint() - start) / 1e9}`);
