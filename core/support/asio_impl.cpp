// The one translation unit that compiles Asio (BOOST_ASIO_SEPARATE_COMPILATION is defined for every
// target that links agentd_support), so no other file pays for Asio's implementation.
#include <boost/asio/impl/src.hpp>
