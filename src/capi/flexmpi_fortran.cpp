// The C side of the Fortran modules (src/fortran/flexmpi.f90): what Fortran
// cannot do through ISO_C_BINDING alone, over the C API (include/flexmpi.h).
//   - MPI handles arrive as MPI_Fint and are converted here (MPI_Type_f2c is a
//     macro in MPICH, a function on pointers in Open MPI).
//   - Fortran strings (blank-padded, not NUL-terminated) and string arrays
//     become the char* and NULL-terminated char*[] of the C API.
//   - Registered structures live in flexmpi-owned storage: Fortran cannot let
//     C reallocate an allocatable, so a FortranStructure keeps the malloc'ed
//     buffers whose addresses are registered, and the module views them as
//     Fortran pointer arrays (c_f_pointer) after every call that may move them.
//     A swapped pair's two buffers are both here: the application's swap
//     (flexmpi_f_swap) exchanges the registered pointers themselves, which is
//     what XMPI_Register_pair follows.
// Failures are XMPI_ERR_* codes with their message kept for
// XMPI_Last_error_message, like every C API function.
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "capi/guarded.hpp"
#include "flexmpi.h"

namespace {

using flexmpi::capi::guarded;

enum StructureKind { kVector = 0, kDense = 1, kSparse = 2, kRows = 3, kPair = 4 };

// One registered structure of a Fortran program. Its address is the Fortran
// handle; data (or ia, ja and data for a sparse matrix, or data and next for
// a pair) are the pointers whose addresses the C API follows. Rows of
// row_length elements, with ghost_rows ghost rows before and after the block
// in the same buffer (XMPI_Register_rows); a vector's and a sparse matrix's
// rows are one element.
struct FortranStructure {
  void* data = nullptr;
  void* next = nullptr;
  int* ia = nullptr;
  int* ja = nullptr;
  int kind = kVector;
  int scheme = XMPI_DISTRIBUTED;
  long long size = 0;
  long long row_length = 1;
  int ghost_rows = 0;
  long long nnz_total = 0;
  long long element_bytes = 0;
  bool registered = false;
};

void fail(int code, const std::string& message) {
  throw flexmpi::Error(static_cast<flexmpi::Errc>(code), message);
}

void check(int code) {
  if (code != XMPI_SUCCESS) fail(code, XMPI_Last_error_message());
}

// A Fortran string without its trailing blanks.
std::string from_fortran(const char* chars, int length) {
  std::string text(chars, static_cast<std::size_t>(length > 0 ? length : 0));
  text.erase(text.find_last_not_of(' ') + 1);
  return text;
}

// A Fortran array of `count` strings of `length` characters, as the C API's
// NULL-terminated char*[] (`pointers`, into `strings`); count < 0: absent (NULL).
class StringList {
 public:
  StringList(const char* chars, int count, int length) {
    if (count < 0) return;
    for (int k = 0; k < count; ++k) strings_.push_back(from_fortran(chars + k * length, length));
    for (std::string& text : strings_) pointers_.push_back(text.data());
    pointers_.push_back(nullptr);
  }
  char** get() { return pointers_.empty() ? nullptr : pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

// Rows of `size` this process holds now: its block (distributed), all rows
// (replicated), none outside XMPI_COMM_WORLD (a removed process).
long long local_rows(const FortranStructure& s) {
  if (s.scheme == XMPI_REPLICATED) return s.size;
  if (XMPI_COMM_WORLD == MPI_COMM_NULL) return 0;
  int rank = 0, nprocs = 1, count = 0, displ = 0;
  PMPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  PMPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  check(XMPI_Get_wsize(rank, nprocs, static_cast<int>(s.size), &count, &displ));
  return count;
}

void* allocate(long long bytes) {
  void* buffer = std::calloc(static_cast<std::size_t>(bytes > 0 ? bytes : 1), 1);
  if (buffer == nullptr) fail(XMPI_ERR_NOMEM, "no memory for a registered Fortran array");
  return buffer;
}

void free_buffers(FortranStructure& s) {
  std::free(s.data);
  std::free(s.next);
  std::free(s.ia);
  std::free(s.ja);
  s.data = s.next = nullptr;
  s.ia = s.ja = nullptr;
}

// The zero-filled buffers of this process's block (with its ghost rows),
// registered; a sparse matrix's row offsets are the block's `ia` (rows + 1
// entries, from 0).
void register_structure(FortranStructure& s, const int* ia, MPI_Datatype type) {
  const long long rows = local_rows(s);
  const long long local_nnz = s.kind == kSparse ? ia[rows] : 0;
  if (local_nnz < 0 || local_nnz > s.nnz_total) {
    fail(XMPI_ERR_ARG, "ia(count+1)=" + std::to_string(local_nnz) +
                           ": expected 0 to nnz=" + std::to_string(s.nnz_total));
  }
  const long long held_rows = rows + 2LL * s.ghost_rows;
  const long long elements = s.kind == kSparse ? local_nnz : held_rows * s.row_length;
  s.data = allocate(elements * s.element_bytes);
  if (s.kind == kPair) s.next = allocate(elements * s.element_bytes);
  const auto scheme = static_cast<XMPI_Scheme>(s.scheme);
  if (s.kind == kSparse) {
    const auto int_bytes = static_cast<long long>(sizeof(int));
    s.ia = static_cast<int*>(allocate((rows + 1) * int_bytes));
    std::memcpy(s.ia, ia, static_cast<std::size_t>((rows + 1) * int_bytes));
    s.ja = static_cast<int*>(allocate(local_nnz * int_bytes));
    check(XMPI_Register_sparse(&s.ia, &s.ja, &s.data, s.size, s.nnz_total, type, scheme));
  } else if (s.kind == kPair) {
    check(XMPI_Register_pair(&s.data, &s.next, s.size, s.row_length, s.ghost_rows, type, scheme));
  } else if (s.kind == kRows) {
    check(XMPI_Register_rows(&s.data, s.size, s.row_length, s.ghost_rows, type, scheme));
  } else if (s.kind == kDense) {
    check(XMPI_Register_dense(&s.data, s.size, type, scheme));
  } else {
    check(XMPI_Register_vector(&s.data, s.size, type, scheme));
  }
  s.registered = true;
}

FortranStructure& registered(FortranStructure* s) {
  if (s == nullptr || !s->registered) fail(XMPI_ERR_ARG, "the XMPI_Array is not registered");
  return *s;
}

}  // namespace

extern "C" {

// Registers a vector (kind 0), dense matrix (1), CSR matrix (2), rows (3) or
// swapped pair of rows (4) of `size` rows of `row_length` elements (1 for a
// vector or CSR matrix, size for a dense one) with `ghost_rows` ghost rows
// (rows and pairs) in new flexmpi-owned storage; *handle receives it. Sparse
// only: nnz, the whole matrix's nonzeros, and ia, the block's row offsets
// (rows + 1).
int flexmpi_f_register(FortranStructure** handle, int kind, long long size, long long row_length,
                       int ghost_rows, long long nnz, const int* ia, MPI_Fint type, int scheme) {
  return guarded([&] {
    *handle = nullptr;
    if (kind < kVector || kind > kPair) fail(XMPI_ERR_ARG, "unknown structure kind");
    const MPI_Datatype c_type = MPI_Type_f2c(type);
    int type_bytes = 0;
    if (c_type == MPI_DATATYPE_NULL || PMPI_Type_size(c_type, &type_bytes) != MPI_SUCCESS) {
      fail(XMPI_ERR_ARG, "datatype is not a valid MPI datatype");
    }
    if (kind == kSparse && ia == nullptr) fail(XMPI_ERR_ARG, "ia is absent");
    auto* s = new FortranStructure{};
    s->kind = kind;
    s->scheme = scheme;
    s->size = size;
    s->row_length = row_length;
    s->ghost_rows = ghost_rows;
    s->nnz_total = nnz;
    s->element_bytes = type_bytes;
    try {
      if (size < 0 || size > 2147483647LL) fail(XMPI_ERR_ARG, "size out of range");
      register_structure(*s, ia, c_type);
    } catch (...) {
      free_buffers(*s);
      delete s;
      throw;
    }
    *handle = s;
    return XMPI_SUCCESS;
  });
}

// Where the structure's buffers are now (data and next: the buffers' starts,
// the first ghost row; next NULL but for a pair) and how many elements this
// process holds: rows of its block (all rows if replicated), elements of its
// block (rows x row_length, the block's nonzeros for a sparse matrix), the
// elements of a row and the ghost rows on each side of the block.
int flexmpi_f_view(const FortranStructure* s, void** data, void** next, int** ia, int** ja,
                   long long* rows, long long* elements, long long* row_length, int* ghost_rows,
                   long long* element_bytes) {
  return guarded([&] {
    if (s == nullptr) fail(XMPI_ERR_ARG, "the XMPI_Array is not registered");
    *data = s->data;
    *next = s->next;
    *ia = s->ia;
    *ja = s->ja;
    *element_bytes = s->element_bytes;
    *row_length = s->row_length;
    *ghost_rows = s->ghost_rows;
    *rows = s->registered ? local_rows(*s) : 0;
    if (s->kind == kSparse) {
      *elements = s->ia == nullptr ? 0 : s->ia[*rows];
    } else {
      *elements = *rows * s->row_length;
    }
    return XMPI_SUCCESS;
  });
}

// The application's swap of a pair (current <-> next), on the registered
// pointers: the buffer flexmpi moves and exchanges as current is then next's.
int flexmpi_f_swap(FortranStructure* s) {
  return guarded([&] {
    if (s == nullptr || s->kind != kPair) {
      fail(XMPI_ERR_ARG, "the XMPI_Array is not a pair (XMPI_Register_pair)");
    }
    std::swap(s->data, s->next);
    return XMPI_SUCCESS;
  });
}

// The halo exchange of the structure's current buffer: operation 0 blocking
// (XMPI_Halo_exchange), 1 XMPI_Halo_start, 2 XMPI_Halo_finish.
int flexmpi_f_halo(FortranStructure* s, int operation) {
  return guarded([&] {
    void* address = &registered(s).data;
    if (operation == 0) {
      check(XMPI_Halo_exchange(address));
    } else if (operation == 1) {
      check(XMPI_Halo_start(address));
    } else if (operation == 2) {
      check(XMPI_Halo_finish(address));
    } else {
      fail(XMPI_ERR_ARG, "unknown halo operation");
    }
    return XMPI_SUCCESS;
  });
}

// Stops following the structure; its buffers stay (flexmpi_f_free frees them).
int flexmpi_f_unregister(FortranStructure* s) {
  return guarded([&] {
    registered(s);
    check(XMPI_Unregister(s->kind == kSparse ? static_cast<void*>(&s->ia) : &s->data));
    s->registered = false;
    return XMPI_SUCCESS;
  });
}

// Unregisters (if registered) and frees the structure; *handle becomes NULL.
// A removed process, and any after MPI_Finalize, follow nothing any more:
// what the runtime refuses to unregister there is the application's already.
int flexmpi_f_free(FortranStructure** handle) {
  return guarded([&] {
    FortranStructure* s = *handle;
    if (s == nullptr) return XMPI_SUCCESS;
    const bool followed = XMPI_COMM_WORLD != MPI_COMM_NULL;
    if (s->registered && followed) check(flexmpi_f_unregister(s));
    free_buffers(*s);
    delete s;
    *handle = nullptr;
    return XMPI_SUCCESS;
  });
}

int flexmpi_f_register_record(const char* name, int name_length, void* buffer, long long count,
                              MPI_Fint type) {
  return XMPI_Register_record(from_fortran(name, name_length).c_str(), buffer, count,
                              MPI_Type_f2c(type));
}

// events: `count` names of `length` characters; count < 0: none (NULL).
int flexmpi_f_monitor_iter_begin(const char* events, int count, int length) {
  StringList names(events, count, length);
  return XMPI_Monitor_iter_begin(names.get());
}

// Absent strings: command_length < 0, argc < 0.
int flexmpi_f_eval_reconfig(int rank, int nprocs, int it, int maxit, int* count, int* displ,
                            double* weight, const char* argv, int argc, int argv_length,
                            const char* command, int command_length) {
  StringList arguments(argv, argc, argv_length);
  std::string program = from_fortran(command, command_length);
  return XMPI_Eval_reconfig(rank, nprocs, it, maxit, count, displ, weight, arguments.get(),
                            command_length < 0 ? nullptr : program.data());
}

// info: NULL if absent (MPI_INFO_NULL).
int flexmpi_f_spawn(const char* command, int command_length, const char* argv, int argc,
                    int argv_length, int nprocs, const MPI_Fint* info, const char* node_class,
                    int classes, int class_length) {
  StringList arguments(argv, argc, argv_length);
  StringList node_classes(node_class, classes, class_length);
  const std::string program = from_fortran(command, command_length);
  return XMPI_Spawn(command_length < 0 ? nullptr : program.c_str(), arguments.get(), nprocs,
                    info == nullptr ? MPI_INFO_NULL : MPI_Info_f2c(*info), node_classes.get());
}

int flexmpi_f_remove(int nprocs, const char* node_class, int classes, int class_length) {
  StringList node_classes(node_class, classes, class_length);
  return XMPI_Remove(nprocs, node_classes.get());
}

}  // extern "C"
