// The one translation unit that compiles Beast and Asio's SSL support
// (BOOST_BEAST_SEPARATE_COMPILATION is defined for every target linking agentd_net).
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
