// The one translation unit that compiles Asio's and Beast's implementation
// (BOOST_*_SEPARATE_COMPILATION): every other TU only sees declarations.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
