#include "base/element_type.hpp"

#include <array>
#include <cstdint>
#include <utility>

namespace flexmpi {

namespace {

// An integer type by its size and signedness (MPI_LONG is 4 or 8 bytes).
template <typename Integer>
constexpr ElementType integer_type() {
  constexpr bool is_signed = static_cast<Integer>(-1) < 0;
  switch (sizeof(Integer)) {
    case 1:
      return is_signed ? ElementType::int8 : ElementType::uint8;
    case 2:
      return is_signed ? ElementType::int16 : ElementType::uint16;
    case 4:
      return is_signed ? ElementType::int32 : ElementType::uint32;
    default:
      return is_signed ? ElementType::int64 : ElementType::uint64;
  }
}

}  // namespace

ElementType element_type_of(MPI_Datatype type) {
  // Named types are constants of the MPI library: compared, not decoded.
  const std::array<std::pair<MPI_Datatype, ElementType>, 24> named{{
      {MPI_DOUBLE, ElementType::float64},
      {MPI_FLOAT, ElementType::float32},
      {MPI_INT, integer_type<int>()},
      {MPI_UNSIGNED, integer_type<unsigned>()},
      {MPI_LONG, integer_type<long>()},
      {MPI_UNSIGNED_LONG, integer_type<unsigned long>()},
      {MPI_LONG_LONG, integer_type<long long>()},
      {MPI_LONG_LONG_INT, integer_type<long long>()},
      {MPI_UNSIGNED_LONG_LONG, integer_type<unsigned long long>()},
      {MPI_SHORT, integer_type<short>()},
      {MPI_UNSIGNED_SHORT, integer_type<unsigned short>()},
      {MPI_CHAR, ElementType::int8},
      {MPI_SIGNED_CHAR, ElementType::int8},
      {MPI_UNSIGNED_CHAR, ElementType::uint8},
      {MPI_BYTE, ElementType::uint8},
      {MPI_INT8_T, ElementType::int8},
      {MPI_UINT8_T, ElementType::uint8},
      {MPI_INT16_T, ElementType::int16},
      {MPI_UINT16_T, ElementType::uint16},
      {MPI_INT32_T, ElementType::int32},
      {MPI_UINT32_T, ElementType::uint32},
      {MPI_INT64_T, ElementType::int64},
      {MPI_UINT64_T, ElementType::uint64},
      {MPI_AINT, integer_type<MPI_Aint>()},
  }};
  for (const auto& [mpi, element] : named) {
    if (type == mpi) return element;
  }
  return ElementType::opaque;
}

std::string_view element_type_name(ElementType type) {
  switch (type) {
    case ElementType::int8:
      return "int8";
    case ElementType::uint8:
      return "uint8";
    case ElementType::int16:
      return "int16";
    case ElementType::uint16:
      return "uint16";
    case ElementType::int32:
      return "int32";
    case ElementType::uint32:
      return "uint32";
    case ElementType::int64:
      return "int64";
    case ElementType::uint64:
      return "uint64";
    case ElementType::float32:
      return "float32";
    case ElementType::float64:
      return "float64";
    case ElementType::opaque:
      break;
  }
  return "opaque";
}

}  // namespace flexmpi
