// Explicit instantiations of the exec/ templates that take locks. Clang
// checks a template's lock annotations only where it is instantiated, and
// `make check-thread-safety` compiles the libraries alone (libstdc++ 12's
// ranges, which the tests use, do not compile with clang 14), so without
// these the analysis would never see them.

#include <spillway/exec/channel.hpp>
#include <spillway/exec/detail/seq_join_core.hpp>

template class spillway::exec::Channel<int>;
template class spillway::exec::detail::SeqJoinCore<int>;
