#include <spillway/table/tpch_generator.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include <spillway/core/ascii_case.hpp>
#include <spillway/core/error.hpp>
#include <spillway/table/date32.hpp>
#include <spillway/table/table_builder.hpp>

#include "xxhash.hpp"

namespace spillway::table {
namespace {

constexpr std::int32_t start_date = to_date32({1992, 1, 1});
constexpr std::int32_t end_date = to_date32({1998, 12, 31});
constexpr std::int32_t current_date = to_date32({1995, 6, 17});
constexpr std::int32_t last_order_date = end_date - 151;

/// SplitMix64: small, fast, and good enough for test data.
class Random {
  public:
    explicit Random(std::uint64_t seed) noexcept : state_(seed) {}

    std::uint64_t next() noexcept {
        state_ += 0x9e3779b97f4a7c15;
        auto mixed = state_;
        mixed = (mixed ^ (mixed >> 30)) * 0xbf58476d1ce4e5b9;
        mixed = (mixed ^ (mixed >> 27)) * 0x94d049bb133111eb;
        return mixed ^ (mixed >> 31);
    }

    /// Uniform in [low, high].
    std::int64_t uniform(std::int64_t low, std::int64_t high) noexcept {
        auto const range = static_cast<std::uint64_t>(high - low) + 1;
        auto const offset = range <= 0xffffffff ? ((next() >> 32) * range) >> 32 : next() % range;
        return low + static_cast<std::int64_t>(offset);
    }

    template <typename T, std::size_t N>
    T const& pick(std::array<T, N> const& choices) noexcept {
        return choices[static_cast<std::size_t>(uniform(0, N - 1))];
    }

  private:
    std::uint64_t state_;
};

// The words and grammar of TPC-H clause 4.2.2.10, from which comments are cut.
constexpr std::array<std::string_view, 41> nouns{
    "foxes", "ideas", "theodolites", "pinto beans", "instructions", "dependencies", "excuses", "platelets",
    "asymptotes", "courts", "dolphins", "multipliers", "sauternes", "warthogs", "frets", "dinos", "attainments",
    "somas", "Tiresias", "patterns", "forges", "braids", "hockey players", "frays", "warhorses", "dugouts",
    "notornis", "epitaphs", "pearls", "tithes", "waters", "orbits", "gifts", "sheaves", "depths", "sentiments",
    "decoys", "realms", "pains", "grouches", "escapades"};
constexpr std::array<std::string_view, 40> verbs{
    "sleep", "wake", "are", "cajole", "haggle", "nag", "use", "boost", "affix", "detect", "integrate", "maintain",
    "nod", "was", "lose", "sublate", "solve", "thrash", "promise", "engage", "hinder", "print", "x-ray", "breach",
    "eat", "grow", "impress", "mold", "poach", "serve", "run", "dazzle", "snooze", "doze", "unwind", "kindle",
    "play", "hang", "believe", "doubt"};
constexpr std::array<std::string_view, 25> adjectives{
    "furious", "sly", "careful", "blithe", "quick", "fluffy", "slow", "quiet", "ruthless", "thin", "close", "dogged",
    "daring", "brave", "stealthy", "permanent", "enticing", "idle", "busy", "regular", "final", "ironic", "even",
    "bold", "silent"};
constexpr std::array<std::string_view, 28> adverbs{
    "sometimes", "always", "never", "furiously", "slyly", "carefully", "blithely", "quickly", "fluffily", "slowly",
    "quietly", "ruthlessly", "thinly", "closely", "doggedly", "daringly", "bravely", "stealthily", "permanently",
    "enticingly", "idly", "busily", "regularly", "finally", "ironically", "evenly", "boldly", "silently"};
constexpr std::array<std::string_view, 47> prepositions{
    "about", "above", "according to", "across", "after", "against", "along", "alongside of", "among", "around",
    "at", "atop", "before", "behind", "beneath", "beside", "besides", "between", "beyond", "by", "despite",
    "during", "except", "for", "from", "in place of", "inside", "instead of", "into", "near", "of", "on",
    "outside", "over", "past", "since", "through", "throughout", "to", "toward", "under", "until", "up", "upon",
    "without", "with", "within"};
constexpr std::array<std::string_view, 18> auxiliaries{
    "do", "may", "might", "shall", "will", "would", "can", "could", "should", "ought to", "must", "will have to",
    "shall have to", "could have to", "should have to", "must have to", "need to", "try to"};
constexpr std::array<std::string_view, 6> terminators{".", ";", ":", "?", "!", "--"};

constexpr std::array<std::string_view, 5> priorities{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"};
constexpr std::array<std::string_view, 4> instructions{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"};
constexpr std::array<std::string_view, 7> modes{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"};

// The colours of part names (clause 4.2.3, P_NAME).
constexpr std::array<std::string_view, 92> colours{
    "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched", "blue", "blush", "brown",
    "burlywood", "burnished", "chartreuse", "chiffon", "chocolate", "coral", "cornflower", "cornsilk", "cream",
    "cyan", "dark", "deep", "dim", "dodger", "drab", "firebrick", "floral", "forest", "frosted", "gainsboro",
    "ghost", "goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace", "lavender",
    "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium", "metallic", "midnight", "mint",
    "misty", "moccasin", "navajo", "navy", "olive", "orange", "orchid", "pale", "papaya", "peach", "peru", "pink",
    "plum", "powder", "puff", "purple", "red", "rose", "rosy", "royal", "saddle", "salmon", "sandy", "seashell",
    "sienna", "sky", "slate", "smoke", "snow", "spring", "steel", "tan", "thistle", "tomato", "turquoise",
    "violet", "wheat", "white", "yellow"};
constexpr std::array<std::string_view, 6> type_sizes{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"};
constexpr std::array<std::string_view, 5> type_finishes{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"};
constexpr std::array<std::string_view, 5> type_metals{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"};
constexpr std::array<std::string_view, 5> container_sizes{"SM", "LG", "MED", "JUMBO", "WRAP"};
constexpr std::array<std::string_view, 8> container_kinds{"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"};
constexpr std::array<std::string_view, 5> segments{"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"};

/// The nations of clause 4.2.3: name and region, by nation key.
constexpr std::array<std::pair<std::string_view, std::int64_t>, 25> nations{{
    {"ALGERIA", 0}, {"ARGENTINA", 1}, {"BRAZIL", 1}, {"CANADA", 1}, {"EGYPT", 4}, {"ETHIOPIA", 0}, {"FRANCE", 3},
    {"GERMANY", 3}, {"INDIA", 2}, {"INDONESIA", 2}, {"IRAN", 4}, {"IRAQ", 4}, {"JAPAN", 2}, {"JORDAN", 4},
    {"KENYA", 0}, {"MOROCCO", 0}, {"MOZAMBIQUE", 0}, {"PERU", 1}, {"CHINA", 2}, {"ROMANIA", 3},
    {"SAUDI ARABIA", 4}, {"VIETNAM", 2}, {"RUSSIA", 3}, {"UNITED KINGDOM", 3}, {"UNITED STATES", 1}}};
constexpr std::array<std::string_view, 5> regions{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};

void append_words(std::string& out, std::initializer_list<std::string_view> words) {
    for (auto const word : words) {
        if (!out.empty() && out.back() != ' ') {
            out += ' ';
        }
        out += word;
    }
}

void append_noun_phrase(Random& random, std::string& out) {
    switch (random.uniform(0, 3)) {
        case 0: append_words(out, {random.pick(nouns)}); break;
        case 1: append_words(out, {random.pick(adjectives), random.pick(nouns)}); break;
        case 2:
            append_words(out, {random.pick(adjectives)});
            out += ',';
            append_words(out, {random.pick(adjectives), random.pick(nouns)});
            break;
        default: append_words(out, {random.pick(adverbs), random.pick(adjectives), random.pick(nouns)}); break;
    }
}

void append_verb_phrase(Random& random, std::string& out) {
    switch (random.uniform(0, 3)) {
        case 0: append_words(out, {random.pick(verbs)}); break;
        case 1: append_words(out, {random.pick(auxiliaries), random.pick(verbs)}); break;
        case 2: append_words(out, {random.pick(verbs), random.pick(adverbs)}); break;
        default: append_words(out, {random.pick(auxiliaries), random.pick(verbs), random.pick(adverbs)}); break;
    }
}

void append_prepositional_phrase(Random& random, std::string& out) {
    append_words(out, {random.pick(prepositions), "the"});
    append_noun_phrase(random, out);
}

void append_sentence(Random& random, std::string& out) {
    auto const form = random.uniform(0, 4);
    append_noun_phrase(random, out);
    if (form >= 3) {
        append_prepositional_phrase(random, out);
    }
    append_verb_phrase(random, out);
    if (form == 1 || form == 4) {
        append_prepositional_phrase(random, out);
    } else if (form == 2 || form == 3) {
        append_noun_phrase(random, out);
    }
    out += random.pick(terminators);
}

/// The text that comments are cut from: sentences of the grammar above,
/// drawn from a fixed seed, so every generator shares it.
std::string_view text_pool() {
    static std::string const pool = [] {
        constexpr std::size_t pool_bytes = 256 << 10;  // fits a core's L2 cache, so cutting a comment rarely misses
        Random random(0x7470636874657874);  // "tpchtext"
        std::string text;
        text.reserve(pool_bytes + 256);
        while (text.size() < pool_bytes) {
            append_sentence(random, text);
        }
        text.resize(pool_bytes);
        return text;
    }();
    return pool;
}

/// A comment of `low` to `high` characters cut from the text pool.
std::string_view comment(Random& random, std::string_view pool, std::int64_t low, std::int64_t high) {
    auto const length = static_cast<std::size_t>(random.uniform(low, high));
    auto const offset = static_cast<std::size_t>(random.uniform(0, static_cast<std::int64_t>(pool.size() - length)));
    return pool.substr(offset, length);
}

std::int64_t at_least_one(double count) { return std::max<std::int64_t>(1, std::llround(count)); }

/// `prefix` and `key` in nine digits: `Supplier#000000042`.
std::string_view numbered(char (&out)[32], char const* prefix, std::int64_t key) {
    auto const length = std::snprintf(out, sizeof(out), "%s%09lld", prefix, static_cast<long long>(key));
    return {out, static_cast<std::size_t>(length)};
}

/// A phone number of nation `nation`: `CC-LLL-LLL-LLLL`, CC the nation key plus 10.
std::string_view phone(char (&out)[32], Random& random, std::int64_t nation) {
    auto const length = std::snprintf(
        out, sizeof(out), "%02lld-%03lld-%03lld-%04lld", static_cast<long long>(nation + 10),
        static_cast<long long>(random.uniform(100, 999)), static_cast<long long>(random.uniform(100, 999)),
        static_cast<long long>(random.uniform(1000, 9999))
    );
    return {out, static_cast<std::size_t>(length)};
}

/// An address: 10 to 40 random letters, digits, commas and spaces.
std::string address(Random& random) {
    static constexpr std::string_view letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789, ";
    std::string text(static_cast<std::size_t>(random.uniform(10, 40)), ' ');
    for (auto& c : text) {
        c = letters[static_cast<std::size_t>(random.uniform(0, letters.size() - 1))];
    }
    return text;
}

/// An account balance: -999.99 to 9999.99.
double account_balance(Random& random) { return static_cast<double>(random.uniform(-99999, 999999)) / 100; }

/// The retail price of part `part`, in cents (clause 4.2.3, P_RETAILPRICE).
std::int64_t retail_cents(std::int64_t part) noexcept { return 90000 + (part / 10) % 20001 + 100 * (part % 1000); }

/// Supplier `choice` (0 to 3) of part `part` among `suppliers` (clause 4.2.3,
/// PS_SUPPKEY), but for a supplier the formula gives the part twice (it does
/// with fewer than about 250 suppliers), which is replaced by the next one the
/// part does not have yet, so that (part, supplier) is a key where there are
/// four suppliers or more.
std::int64_t supplier_of(std::int64_t part, std::int64_t choice, std::int64_t suppliers) noexcept {
    std::array<std::int64_t, 4> chosen{};
    for (std::int64_t earlier = 0; earlier <= choice; ++earlier) {
        auto supplier = (part + earlier * (suppliers / 4 + (part - 1) / suppliers)) % suppliers;
        auto const taken = chosen.begin() + earlier;
        for (std::int64_t step = 1; step < suppliers && std::find(chosen.begin(), taken, supplier + 1) != taken;
             ++step) {
            supplier = (supplier + 1) % suppliers;
        }
        *taken = supplier + 1;
    }
    return chosen[static_cast<std::size_t>(choice)];
}

}  // namespace

TpchGenerator::TpchGenerator(double scale, std::uint64_t seed, std::size_t orders_per_chunk)
    : scale_(scale), seed_(seed), orders_per_chunk_(orders_per_chunk) {
    SPILLWAY_EXPECTS(std::isfinite(scale) && scale > 0 && scale <= max_scale,
                     "TPC-H scale factor " << scale << " is out of range; it must be positive and at most "
                                           << max_scale,
                     InvalidArgument);
    SPILLWAY_EXPECTS(orders_per_chunk > 0 && orders_per_chunk <= max_orders_per_chunk,
                     "a TPC-H chunk of " << orders_per_chunk << " orders; it holds 1 to " << max_orders_per_chunk,
                     InvalidArgument);
    num_orders_ = static_cast<std::uint64_t>(at_least_one(scale * 1'500'000));
    customers_ = at_least_one(scale * 150'000);
    parts_ = at_least_one(scale * 200'000);
    suppliers_ = at_least_one(scale * 10'000);
    clerks_ = at_least_one(scale * 1'000);
}

Schema TpchGenerator::orders_schema() {
    return Schema({{"o_orderkey", DataType::int64},
                   {"o_custkey", DataType::int64},
                   {"o_orderstatus", DataType::string},
                   {"o_totalprice", DataType::float64},
                   {"o_orderdate", DataType::date32},
                   {"o_orderpriority", DataType::string},
                   {"o_clerk", DataType::string},
                   {"o_shippriority", DataType::int32},
                   {"o_comment", DataType::string}});
}

Schema TpchGenerator::lineitem_schema() {
    return Schema({{"l_orderkey", DataType::int64},
                   {"l_partkey", DataType::int64},
                   {"l_suppkey", DataType::int64},
                   {"l_linenumber", DataType::int32},
                   {"l_quantity", DataType::float64},
                   {"l_extendedprice", DataType::float64},
                   {"l_discount", DataType::float64},
                   {"l_tax", DataType::float64},
                   {"l_returnflag", DataType::string},
                   {"l_linestatus", DataType::string},
                   {"l_shipdate", DataType::date32},
                   {"l_commitdate", DataType::date32},
                   {"l_receiptdate", DataType::date32},
                   {"l_shipinstruct", DataType::string},
                   {"l_shipmode", DataType::string},
                   {"l_comment", DataType::string}});
}

std::string_view to_string(TpchTable table) noexcept {
    switch (table) {
        case TpchTable::part: return "part";
        case TpchTable::supplier: return "supplier";
        case TpchTable::partsupp: return "partsupp";
        case TpchTable::customer: return "customer";
        case TpchTable::orders: return "orders";
        case TpchTable::lineitem: return "lineitem";
        case TpchTable::nation: return "nation";
        case TpchTable::region: return "region";
    }
    return "?";
}

TpchTable parse_tpch_table(std::string_view name) {
    for (auto const table : all_tpch_tables) {
        if (equals_ignoring_case(to_string(table), name)) {
            return table;
        }
    }
    SPILLWAY_FAIL("'" << name
                      << "' is not a TPC-H table; the tables are part, supplier, partsupp, customer, orders, "
                         "lineitem, nation and region",
                  InvalidArgument);
}

Schema TpchGenerator::schema(TpchTable table) {
    switch (table) {
        case TpchTable::part:
            return Schema({{"p_partkey", DataType::int64},
                           {"p_name", DataType::string},
                           {"p_mfgr", DataType::string},
                           {"p_brand", DataType::string},
                           {"p_type", DataType::string},
                           {"p_size", DataType::int32},
                           {"p_container", DataType::string},
                           {"p_retailprice", DataType::float64},
                           {"p_comment", DataType::string}});
        case TpchTable::supplier:
            return Schema({{"s_suppkey", DataType::int64},
                           {"s_name", DataType::string},
                           {"s_address", DataType::string},
                           {"s_nationkey", DataType::int64},
                           {"s_phone", DataType::string},
                           {"s_acctbal", DataType::float64},
                           {"s_comment", DataType::string}});
        case TpchTable::partsupp:
            return Schema({{"ps_partkey", DataType::int64},
                           {"ps_suppkey", DataType::int64},
                           {"ps_availqty", DataType::int32},
                           {"ps_supplycost", DataType::float64},
                           {"ps_comment", DataType::string}});
        case TpchTable::customer:
            return Schema({{"c_custkey", DataType::int64},
                           {"c_name", DataType::string},
                           {"c_address", DataType::string},
                           {"c_nationkey", DataType::int64},
                           {"c_phone", DataType::string},
                           {"c_acctbal", DataType::float64},
                           {"c_mktsegment", DataType::string},
                           {"c_comment", DataType::string}});
        case TpchTable::orders: return orders_schema();
        case TpchTable::lineitem: return lineitem_schema();
        case TpchTable::nation:
            return Schema({{"n_nationkey", DataType::int64},
                           {"n_name", DataType::string},
                           {"n_regionkey", DataType::int64},
                           {"n_comment", DataType::string}});
        case TpchTable::region:
            return Schema({{"r_regionkey", DataType::int64},
                           {"r_name", DataType::string},
                           {"r_comment", DataType::string}});
    }
    SPILLWAY_FAIL("unknown TPC-H table", InvalidArgument);
}

std::int64_t TpchGenerator::rows_of(TpchTable table) const noexcept {
    switch (table) {
        case TpchTable::part:
        case TpchTable::partsupp: return parts_;
        case TpchTable::supplier: return suppliers_;
        case TpchTable::customer: return customers_;
        case TpchTable::orders:
        case TpchTable::lineitem: return static_cast<std::int64_t>(num_orders_);
        case TpchTable::nation: return static_cast<std::int64_t>(nations.size());
        case TpchTable::region: return static_cast<std::int64_t>(regions.size());
    }
    return 0;
}

std::size_t TpchGenerator::num_chunks(TpchTable table) const noexcept {
    if (table == TpchTable::nation || table == TpchTable::region) {
        return 1;
    }
    auto const per_chunk = static_cast<std::int64_t>(orders_per_chunk_);
    return static_cast<std::size_t>((rows_of(table) + per_chunk - 1) / per_chunk);
}

Table TpchGenerator::table(TpchTable table, std::size_t chunk) const {
    if (table == TpchTable::orders) {
        return orders(chunk);
    }
    if (table == TpchTable::lineitem) {
        return lineitem(chunk);
    }
    SPILLWAY_EXPECTS(chunk < num_chunks(table),
                     "chunk " << chunk << " of TPC-H table " << to_string(table) << ", which has "
                              << num_chunks(table) << " chunks",
                     InvalidArgument);
    auto const per_chunk = static_cast<std::int64_t>(table == TpchTable::nation || table == TpchTable::region
                                                         ? rows_of(table)
                                                         : static_cast<std::int64_t>(orders_per_chunk_));
    auto const first = static_cast<std::int64_t>(chunk) * per_chunk;
    auto const last = std::min(first + per_chunk, rows_of(table));
    auto const rows_per_key = table == TpchTable::partsupp ? 4 : 1;
    TableBuilder builder(schema(table), static_cast<std::size_t>((last - first) * rows_per_key));
    generate_rows(table, first, last, builder);
    return builder.finish();
}

void TpchGenerator::generate_rows(TpchTable table, std::int64_t first, std::int64_t last, TableBuilder& out) const {
    auto const pool = text_pool();
    auto const columns = out.columns();
    char text[32];
    // Each row draws from its own stream, as orders do, seeded apart per table.
    auto const table_seed = seed_ + 0x9e3779b97f4a7c15 * (static_cast<std::uint64_t>(table) + 1);
    for (auto index = first; index < last; ++index) {
        Random random(XXH3_64bits_withSeed(&index, sizeof(index), table_seed));
        auto const key = index + 1;
        switch (table) {
            case TpchTable::part: {
                std::array<std::size_t, colours.size()> order{};
                for (std::size_t i = 0; i < order.size(); ++i) {
                    order[i] = i;
                }
                std::string name;
                for (std::size_t word = 0; word < 5; ++word) {  // five distinct colours
                    auto const pick = static_cast<std::size_t>(
                        random.uniform(static_cast<std::int64_t>(word), static_cast<std::int64_t>(order.size()) - 1)
                    );
                    std::swap(order[word], order[pick]);
                    append_words(name, {colours[order[word]]});
                }
                auto const manufacturer = random.uniform(1, 5);
                auto const brand = manufacturer * 10 + random.uniform(1, 5);
                std::string type;
                append_words(type, {random.pick(type_sizes), random.pick(type_finishes), random.pick(type_metals)});
                std::string container;
                append_words(container, {random.pick(container_sizes), random.pick(container_kinds)});
                columns[0].append(key);
                columns[1].append(std::string_view(name));
                columns[2].append(std::string_view("Manufacturer#" + std::to_string(manufacturer)));
                columns[3].append(std::string_view("Brand#" + std::to_string(brand)));
                columns[4].append(std::string_view(type));
                columns[5].append(static_cast<std::int32_t>(random.uniform(1, 50)));
                columns[6].append(std::string_view(container));
                columns[7].append(static_cast<double>(retail_cents(key)) / 100);
                columns[8].append(comment(random, pool, 5, 22));
                break;
            }
            case TpchTable::partsupp:
                for (std::int64_t choice = 0; choice < 4; ++choice) {
                    columns[0].append(key);
                    columns[1].append(supplier_of(key, choice, suppliers_));
                    columns[2].append(static_cast<std::int32_t>(random.uniform(1, 9999)));
                    columns[3].append(static_cast<double>(random.uniform(100, 100000)) / 100);
                    columns[4].append(comment(random, pool, 49, 198));
                }
                break;
            case TpchTable::supplier:
            case TpchTable::customer: {
                bool const customer = table == TpchTable::customer;
                auto const nation = random.uniform(0, static_cast<std::int64_t>(nations.size()) - 1);
                columns[0].append(key);
                columns[1].append(numbered(text, customer ? "Customer#" : "Supplier#", key));
                columns[2].append(std::string_view(address(random)));
                columns[3].append(nation);
                columns[4].append(phone(text, random, nation));
                columns[5].append(account_balance(random));
                if (customer) {
                    columns[6].append(random.pick(segments));
                    columns[7].append(comment(random, pool, 29, 116));
                } else {
                    columns[6].append(comment(random, pool, 25, 100));
                }
                break;
            }
            case TpchTable::nation: {
                auto const& [name, region] = nations[static_cast<std::size_t>(index)];
                columns[0].append(index);
                columns[1].append(name);
                columns[2].append(region);
                columns[3].append(comment(random, pool, 31, 114));
                break;
            }
            case TpchTable::region:
                columns[0].append(index);
                columns[1].append(regions[static_cast<std::size_t>(index)]);
                columns[2].append(comment(random, pool, 31, 115));
                break;
            case TpchTable::orders:
            case TpchTable::lineitem: SPILLWAY_FAIL("orders and lineitem are generated by chunk", InvalidArgument);
        }
    }
}

std::size_t TpchGenerator::num_chunks() const noexcept {
    return static_cast<std::size_t>((num_orders_ + orders_per_chunk_ - 1) / orders_per_chunk_);
}

Table TpchGenerator::orders(std::size_t chunk) const {
    TableBuilder builder(orders_schema(), std::min<std::uint64_t>(orders_per_chunk_, num_orders_));
    generate(chunk, &builder, nullptr);
    return builder.finish();
}

Table TpchGenerator::lineitem(std::size_t chunk) const {
    constexpr std::size_t average_lines_per_order = 4;
    TableBuilder builder(lineitem_schema(),
                         std::min<std::uint64_t>(orders_per_chunk_, num_orders_) * average_lines_per_order);
    generate(chunk, nullptr, &builder);
    return builder.finish();
}

void TpchGenerator::generate(std::size_t chunk, TableBuilder* orders, TableBuilder* lineitem) const {
    SPILLWAY_EXPECTS(chunk < num_chunks(),
                     "TPC-H chunk " << chunk << " of a generator with " << num_chunks() << " chunks", InvalidArgument);
    auto const pool = text_pool();
    auto const orders_out = orders != nullptr ? orders->columns() : std::span<ColumnBuilder>();
    auto const lines_out = lineitem != nullptr ? lineitem->columns() : std::span<ColumnBuilder>();
    auto const first = static_cast<std::uint64_t>(chunk) * orders_per_chunk_;
    auto const last = std::min<std::uint64_t>(first + orders_per_chunk_, num_orders_);
    for (auto index = first; index < last; ++index) {
        // Every value of an order comes from its own stream, drawn in the
        // same sequence whichever table is built.
        Random random(XXH3_64bits_withSeed(&index, sizeof(index), seed_));
        auto const order_key = static_cast<std::int64_t>(index / 8 * 32 + index % 8 + 1);
        std::int64_t customer = random.uniform(1, customers_);
        while (customer % 3 == 0) {  // a third of the customers place no orders
            customer = random.uniform(1, customers_);
        }
        auto const order_date = static_cast<std::int32_t>(random.uniform(start_date, last_order_date));
        auto const priority = random.pick(priorities);
        auto const clerk = random.uniform(1, clerks_);
        auto const order_comment = comment(random, pool, 19, 78);
        auto const lines = random.uniform(1, 7);
        std::int64_t total_cents = 0;
        std::int64_t shipped_lines = 0;
        for (std::int32_t line = 1; line <= lines; ++line) {
            auto const part = random.uniform(1, parts_);
            auto const supplier = supplier_of(part, random.uniform(0, 3), suppliers_);
            auto const quantity = random.uniform(1, 50);
            auto const extended_cents = quantity * retail_cents(part);
            auto const discount_percent = random.uniform(0, 10);
            auto const tax_percent = random.uniform(0, 8);
            auto const ship_date = order_date + static_cast<std::int32_t>(random.uniform(1, 121));
            auto const commit_date = order_date + static_cast<std::int32_t>(random.uniform(30, 90));
            auto const receipt_date = ship_date + static_cast<std::int32_t>(random.uniform(1, 30));
            std::string_view const return_flag =
                receipt_date <= current_date ? (random.uniform(0, 1) == 0 ? "R" : "A") : "N";
            bool const shipped = ship_date <= current_date;
            auto const instruction = random.pick(instructions);
            auto const mode = random.pick(modes);
            auto const line_comment = comment(random, pool, 10, 43);
            total_cents += std::llround(static_cast<double>(extended_cents) * static_cast<double>(100 + tax_percent)
                                        * static_cast<double>(100 - discount_percent) / 10000.0);
            shipped_lines += shipped ? 1 : 0;
            if (!lines_out.empty()) {
                lines_out[0].append(order_key);
                lines_out[1].append(part);
                lines_out[2].append(supplier);
                lines_out[3].append(line);
                lines_out[4].append(static_cast<double>(quantity));
                lines_out[5].append(static_cast<double>(extended_cents) / 100);
                lines_out[6].append(static_cast<double>(discount_percent) / 100);
                lines_out[7].append(static_cast<double>(tax_percent) / 100);
                lines_out[8].append(return_flag);
                lines_out[9].append(std::string_view(shipped ? "F" : "O"));
                lines_out[10].append(ship_date);
                lines_out[11].append(commit_date);
                lines_out[12].append(receipt_date);
                lines_out[13].append(instruction);
                lines_out[14].append(mode);
                lines_out[15].append(line_comment);
            }
        }
        if (!orders_out.empty()) {
            char clerk_text[32];
            std::snprintf(clerk_text, sizeof(clerk_text), "Clerk#%09lld", static_cast<long long>(clerk));
            orders_out[0].append(order_key);
            orders_out[1].append(customer);
            orders_out[2].append(std::string_view(shipped_lines == lines ? "F" : shipped_lines == 0 ? "O" : "P"));
            orders_out[3].append(static_cast<double>(total_cents) / 100);
            orders_out[4].append(order_date);
            orders_out[5].append(priority);
            orders_out[6].append(std::string_view(clerk_text));
            orders_out[7].append(std::int32_t{0});
            orders_out[8].append(order_comment);
        }
    }
}

}  // namespace spillway::table
