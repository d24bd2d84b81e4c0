// spillway._core: the C++ library under the Python package `spillway`. The
// package's modules wrap it; see python/spillway/__init__.py.

#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <spillway/core/error.hpp>
#include <spillway/core/error_types.hpp>
#include <spillway/core/options.hpp>
#include <spillway/io/file_format.hpp>
#include <spillway/io/table_file.hpp>
#include <spillway/shuffle/shuffle_config.hpp>

#include "arrow_capsules.hpp"
#include "command.hpp"
#include "job_limits.hpp"
#include "local_shuffle.hpp"
#include "table_shuffler.hpp"
#ifdef SPILLWAY_PYTHON_HAVE_MPI
#include "mpi_rank.hpp"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace spillway::python {
namespace {

/// The `SPILLWAY_*` environment with `given` (option name to value) above it.
Options options_of(std::map<std::string, std::string> const& given) {
    auto options = Options::from_environment();
    for (auto const& [name, value] : given) {
        options.set(name, value);
    }
    return options;
}

/// Whether `message`, a failed stream's, says that its Python producer was
/// stopped by KeyboardInterrupt: pyarrow hands a producer's exception on
/// only as text, whose last line is the exception (its traceback before it,
/// or "Python exception: " in older versions).
bool interrupted_producer(std::string_view message) {
    while (message.ends_with('\n')) {
        message.remove_suffix(1);
    }
    auto last = message.substr(message.rfind('\n') + 1);  // the whole message if it has one line
    if (auto const at = last.find("Python exception: "); at != std::string_view::npos) {
        last.remove_prefix(at + std::string_view("Python exception: ").size());
    }
    return last == "KeyboardInterrupt" || last.starts_with("KeyboardInterrupt:");
}

/// Inserts the rows of `reader`, a stream Python data made, into `shuffle`,
/// without the GIL. A Ctrl-C that stopped the stream's Python producer is
/// raised as KeyboardInterrupt, as Ctrl-C is by the calls that read no
/// Python data, not as the IoError of a failed producer.
template <typename Shuffle>
void insert_python_data(Shuffle& shuffle, io::TableFileReader& reader) {
    try {
        nb::gil_scoped_release const released;
        shuffle.insert(reader);
    } catch (IoError const& error) {
        if (interrupted_producer(error.what())) {
            PyErr_SetNone(PyExc_KeyboardInterrupt);
            throw nb::python_error();
        }
        throw;
    }
}

/// A progress listener that calls the Python callable `callback` with the
/// GIL held; an exception it raises is reported as unraisable and ignored,
/// but for `KeyboardInterrupt`: Ctrl-C is raised in the callback when it
/// runs on Python's main thread, and is then left pending, for Python to
/// raise once the call returns, as it does without a callback; the callback
/// is not called again.
std::unique_ptr<cli::Progress> progress_of(std::optional<nb::callable> callback) {
    if (!callback) {
        return std::make_unique<cli::Progress>(cli::Progress::Style::none, std::cerr);
    }
    // Listeners are called one at a time (`cli::Progress::Listener`).
    auto listener = [callback = std::move(*callback), interrupted = false](
                        std::string const& phase, std::uint64_t done, std::uint64_t total, bool bytes,
                        bool last) mutable {
        nb::gil_scoped_acquire const gil;
        if (interrupted) {
            return;
        }
        try {
            callback(phase, done, total, bytes ? "bytes" : "items", last);
        } catch (nb::python_error& error) {
            if (error.matches(PyExc_KeyboardInterrupt)) {
                interrupted = true;
                PyErr_SetInterrupt();
                return;
            }
            error.discard_as_unraisable("spillway progress callback");
        }
    };
    return std::make_unique<cli::Progress>(std::move(listener));
}

/// The tables of the Parquet, Arrow IPC or CSV file `path` (its format told
/// by its extension; a `.tbl` file in TPC-H's dialect), read by spillway's own reader: Parquet row groups in
/// batches of 65,536 rows, so a large row group does not bound memory.
std::unique_ptr<io::TableFileReader> read_file(std::string const& path) {
    return io::open_table_file(path, io::format_of(path), io::is_tbl(path) ? io::CsvOptions::tbl() : io::CsvOptions());
}

/// `table` for Python, or None.
std::optional<ExportableTable> exportable(std::optional<table::Table> table) {
    if (!table) {
        return std::nullopt;
    }
    return ExportableTable(std::move(*table));
}

nb::dict figures_dict(ResourceFigures const& figures) {
    nb::dict result;
    result["spilled_bytes"] = figures.spilled_bytes;
    result["read_back_bytes"] = figures.read_back_bytes;
    result["peak_host_bytes"] = figures.peak_host_bytes;
    result["peak_disk_bytes"] = figures.peak_disk_bytes;
    result["host_limit_bytes"] = figures.host_limit_bytes;
    return result;
}

/// Raises spillway's errors as the exceptions of `spillway._errors`, which
/// bear the names of their types.
void translate_error(std::exception_ptr const& pointer, void* /*payload*/) {
    try {
        std::rethrow_exception(pointer);
    } catch (Error const& error) {
        with_error_type(error, [&](Error const&, char const* name) {
            nb::object const type = nb::module_::import_("spillway._errors").attr(name);
            PyErr_SetString(type.ptr(), error.what());
        });
    }
}

}  // namespace
}  // namespace spillway::python

NB_MODULE(_core, module) {
    using namespace spillway;
    using namespace spillway::python;
    module.doc() = "The C++ core of spillway; use the functions and classes of the spillway package.";
    nb::register_exception_translator(&translate_error);
    module.attr("MAX_RANKS") = cli::max_ranks;
    module.attr("MAX_PARTITIONS") = cli::max_partitions;

    module.def(
        "run_command",
        [](std::vector<std::string> const& arguments, std::optional<nb::callable> progress) {
            auto const reporter = progress_of(std::move(progress));
            nb::gil_scoped_release const released;
            return run_command(arguments, *reporter);
        },
        "arguments"_a, "progress"_a = nb::none(),
        "Runs the spillway tool's command line `arguments` in this process and returns its JSON summary.");

    nb::class_<ExportableTable>(module, "ExportableTable", "A table that Arrow consumers take without a copy.")
        .def("__arrow_c_array__", &ExportableTable::arrow_c_array, "requested_schema"_a = nb::none())
        .def("__arrow_c_schema__", &ExportableTable::arrow_c_schema)
        .def_prop_ro("num_rows", [](ExportableTable const& self) { return self.table().num_rows(); });

    nb::class_<LocalShuffle>(module, "LocalShuffle", "A shuffle of Arrow data among in-process ranks.")
        .def(
            "__init__",
            [](LocalShuffle* self, std::vector<std::string> keys, std::uint32_t partitions, int ranks,
               std::map<std::string, std::string> const& options) {
                new (self) LocalShuffle(std::move(keys), partitions, ranks, options_of(options));
            },
            "keys"_a, "partitions"_a, "ranks"_a, "options"_a)
        .def("insert",
             [](LocalShuffle& self, nb::handle data) { insert_python_data(self, *read_arrow_stream(data)); },
             "data"_a)
        .def("insert_file",
             [](LocalShuffle& self, std::string const& path) {
                 nb::gil_scoped_release const released;
                 self.insert(*read_file(path));
             },
             "path"_a)
        .def("finish", &LocalShuffle::finish, nb::call_guard<nb::gil_scoped_release>())
        .def(
            "extract", [](LocalShuffle& self, std::uint32_t partition) { return exportable(self.extract(partition)); },
            "partition"_a, nb::call_guard<nb::gil_scoped_release>())
        .def("figures", [](LocalShuffle const& self) { return figures_dict(self.figures()); })
        .def("close", &LocalShuffle::close, nb::call_guard<nb::gil_scoped_release>());

#ifdef SPILLWAY_PYTHON_HAVE_MPI
    nb::class_<MpiRank>(module, "MpiRank", "This process's rank of an MPI communicator.")
        .def(
            "__init__",
            [](MpiRank* self, std::uintptr_t handle, std::map<std::string, std::string> const& options) {
                new (self) MpiRank(handle, options_of(options));
            },
            "handle"_a, "options"_a)
        .def_prop_ro("rank", &MpiRank::rank)
        .def_prop_ro("size", &MpiRank::size)
        .def("figures", [](MpiRank const& self) { return figures_dict(self.figures()); })
        .def("close", &MpiRank::close, nb::call_guard<nb::gil_scoped_release>());

    nb::class_<TableShuffler>(module, "TableShuffler", "One rank's part of a shuffle of Arrow data.")
        .def(
            "__init__",
            [](TableShuffler* self, MpiRank& rank, std::vector<std::string> keys, std::uint32_t partitions,
               std::map<std::string, std::string> const& given) {
                auto options = rank.options();
                for (auto const& [name, value] : given) {
                    options.set(name, value);
                }
                auto const config = shuffle::ShuffleConfig::from_options(options);
                options.expect_read(OptionSource::code, "spillway.Shuffler");
                new (self) TableShuffler(rank.communicator(), rank.next_op_id(), std::move(keys), partitions, config);
            },
            "rank"_a, "keys"_a, "partitions"_a, "options"_a, nb::keep_alive<1, 2>())
        .def("insert",
             [](TableShuffler& self, nb::handle data) {
                 auto const reader = read_arrow_stream(data);
                 static_cast<void>(self.expect_schema(reader->schema()));
                 insert_python_data(self, *reader);
             },
             "data"_a)
        .def("insert_file",
             [](TableShuffler& self, std::string const& path) {
                 nb::gil_scoped_release const released;
                 self.insert(*read_file(path));
             },
             "path"_a)
        .def("insert_finished", &TableShuffler::insert_finished, nb::call_guard<nb::gil_scoped_release>())
        .def_prop_ro("local_partitions", &TableShuffler::local_partitions)
        .def("end_early_quietly", &TableShuffler::end_early_quietly)
        .def(
            "extract",
            [](TableShuffler& self, std::uint32_t partition) { return exportable(self.extract(partition)); },
            "partition"_a, nb::call_guard<nb::gil_scoped_release>());
#endif
}
