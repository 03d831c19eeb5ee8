/* Sizes and names of dtypes, from the one dtype list; names of ops and maps. */
#include "akx.h"
#include "akx/dtype_list.h"
#include "akx/op_list.h"

size_t akx_dtype_size(akx_dtype t) {
  switch (t) {
#define AKX_X_(D, T, N, S) case D: return S;
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
    case AKX_DTYPE_AUTO: break;
  }
  return 0;
}

const char *akx_dtype_name(akx_dtype t) {
  switch (t) {
#define AKX_X_(D, T, N, S) case D: return #N;
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
    case AKX_DTYPE_AUTO: return "auto";
  }
  return "invalid";
}

const char *akx__op_name(akx_op op) {
  switch ((int)op) {
#define AKX_X_(E, F, N) case E: return #N;
    AKX_OP_LIST(AKX_X_)
#undef AKX_X_
    case AKX_OP_ARGMIN: return "ARGMIN";
    case AKX_OP_ARGMAX: return "ARGMAX";
  }
  return (int)op >= AKX_USER_OP_FIRST ? "a user op" : "invalid";
}

const char *akx__map_name(akx_map m) {
  static const char *const names[] = {"IDENTITY", "ABS", "SQUARE", "NONZERO"};
  return (unsigned)m < AKX_MAP_COUNT ? names[m] : "invalid";
}
