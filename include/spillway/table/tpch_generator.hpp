#pragma once
/// @file
/// A deterministic generator of the eight TPC-H tables.

#include <cstddef>
#include <cstdint>

#include <spillway/table/table.hpp>

namespace spillway::table {

class TableBuilder;

/// The tables of TPC-H, in the order its specification lists them.
enum class TpchTable : std::uint8_t { part, supplier, partsupp, customer, orders, lineitem, nation, region };

/// Every `TpchTable`, in order.
inline constexpr TpchTable all_tpch_tables[] = {TpchTable::part,   TpchTable::supplier, TpchTable::partsupp,
                                                TpchTable::customer, TpchTable::orders, TpchTable::lineitem,
                                                TpchTable::nation, TpchTable::region};

/// The lower-case name of `table`, as TPC-H spells it (`partsupp`, `lineitem`, ...).
std::string_view to_string(TpchTable table) noexcept;

/// The table named `name` (as `to_string` spells it, in any case).
/// @throws InvalidArgument naming the tables if `name` is none of them.
TpchTable parse_tpch_table(std::string_view name);

/// Generates the eight TPC-H tables chunk by chunk, with the columns, key
/// relations and value distributions of the TPC-H specification (clause
/// 4.2.3), so that its queries select what they are meant to. For `orders`
/// and `lineitem`: sparse order keys, customer keys that skip every third customer,
/// order dates between 1992-01-01 and 1998-08-02, one to seven line items per
/// order with part and supplier keys, quantities, prices, discounts, taxes,
/// ship, commit and receipt dates, flags and statuses derived as the
/// specification says, and comments cut from a text pool built from the
/// specification's grammar and words. For the others: part names of five
/// distinct colour words (so `p_name LIKE '%green%'` holds for about 5% of
/// parts), types, brands, containers and retail prices as specified; four
/// suppliers per part in `partsupp`, chosen by the formula `lineitem` uses
/// (where, at scales below about 0.025, the formula gives a part one
/// supplier twice, the next supplier the part lacks instead, so that
/// (`ps_partkey`, `ps_suppkey`) is a key from scale 0.0004, four suppliers);
/// five market segments of customers, uniform; the 25 nations and 5
/// regions of the specification. Differences from dbgen: addresses are
/// random letters and digits, and no supplier comment mentions "Customer
/// Complaints" or "Recommends". Decimal columns are `float64` rounded to
/// cents.
///
/// Every order draws its values from its own random stream, seeded by the
/// generator's seed and the order's index. So a chunk depends only on
/// (seed, scale, chunk index, orders per chunk), and the concatenation of all
/// chunks is the same whatever `orders_per_chunk` is and whichever threads
/// or ranks generate which chunks (rank r of n may take chunks r, r + n, ...).
///
/// Thread safety: immutable; const member functions may be called
/// concurrently.
class TpchGenerator {
  public:
    /// The default number of orders per chunk: about 4 MiB of `lineitem`.
    static constexpr std::size_t default_orders_per_chunk = 8192;
    /// The largest scale factor: about four billion orders.
    static constexpr double max_scale = 2666;
    /// The most orders (and parts, customers, suppliers) per chunk: every
    /// chunk's columns fit a column's 2^31 - 1 characters, the largest being
    /// `partsupp`'s comments, up to 199 bytes in each of four rows per part.
    static constexpr std::size_t max_orders_per_chunk = std::size_t{1} << 21;

    /// A generator of scale factor `scale` (1.0 is 1.5 million orders and
    /// about 6 million line items) drawing from `seed`.
    /// @throws InvalidArgument if `scale` is not in (0, `max_scale`], or
    /// `orders_per_chunk` is not in [1, `max_orders_per_chunk`].
    explicit TpchGenerator(double scale, std::uint64_t seed = 0,
                           std::size_t orders_per_chunk = default_orders_per_chunk);

    /// The columns of `orders`: o_orderkey, o_custkey, o_orderstatus,
    /// o_totalprice, o_orderdate, o_orderpriority, o_clerk, o_shippriority,
    /// o_comment.
    [[nodiscard]] static Schema orders_schema();
    /// The columns of `lineitem`: l_orderkey, l_partkey, l_suppkey,
    /// l_linenumber, l_quantity, l_extendedprice, l_discount, l_tax,
    /// l_returnflag, l_linestatus, l_shipdate, l_commitdate, l_receiptdate,
    /// l_shipinstruct, l_shipmode, l_comment.
    [[nodiscard]] static Schema lineitem_schema();

    /// The columns of `table`, with the TPC-H specification's names in its
    /// order (`orders_schema()` and `lineitem_schema()` for those two).
    [[nodiscard]] static Schema schema(TpchTable table);
    /// The scale factor.
    [[nodiscard]] double scale() const noexcept { return scale_; }
    /// The seed the rows are drawn from.
    [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }
    /// The number of orders: 1,500,000 times the scale, at least 1.
    [[nodiscard]] std::uint64_t num_orders() const noexcept { return num_orders_; }
    /// The number of chunks; chunk k holds orders [k * orders_per_chunk, ...).
    [[nodiscard]] std::size_t num_chunks() const noexcept;

    /// The orders of chunk `chunk`.
    /// @throws InvalidArgument if `chunk >= num_chunks()`.
    [[nodiscard]] Table orders(std::size_t chunk) const;
    /// The line items of the orders of chunk `chunk`.
    /// @throws InvalidArgument if `chunk >= num_chunks()`.
    [[nodiscard]] Table lineitem(std::size_t chunk) const;
    /// The number of chunks of `table`: `num_chunks()` for `orders` and
    /// `lineitem`; for `part` (with `partsupp`), `supplier` and `customer`,
    /// as many as hold `orders_per_chunk` of their rows each; one for
    /// `nation` and `region`.
    [[nodiscard]] std::size_t num_chunks(TpchTable table) const noexcept;
    /// Chunk `chunk` of `table`. Chunk `k` of `partsupp` holds the four rows
    /// of each part of chunk `k` of `part`. The rows of a table depend only
    /// on the seed and the scale, not on the chunking.
    /// @throws InvalidArgument if `chunk >= num_chunks(table)`.
    [[nodiscard]] Table table(TpchTable table, std::size_t chunk) const;

  private:
    /// Fills the builders of chunk `chunk`; either may be null to skip that table.
    void generate(std::size_t chunk, TableBuilder* orders, TableBuilder* lineitem) const;
    /// The rows [first, last) of `table`, one of part, partsupp (by part),
    /// supplier, customer, nation or region.
    void generate_rows(TpchTable table, std::int64_t first, std::int64_t last, TableBuilder& out) const;
    /// The rows of `table` (parts for `partsupp`): one `count` for `nation`
    /// and `region` and the scaled counts for the others.
    [[nodiscard]] std::int64_t rows_of(TpchTable table) const noexcept;

    double scale_;
    std::uint64_t seed_;
    std::size_t orders_per_chunk_;
    std::uint64_t num_orders_;
    std::int64_t customers_;  ///< customer keys are in [1, customers_]
    std::int64_t parts_;      ///< part keys are in [1, parts_]
    std::int64_t suppliers_;  ///< supplier keys are in [1, suppliers_]
    std::int64_t clerks_;     ///< clerk numbers are in [1, clerks_]
};

}  // namespace spillway::table
