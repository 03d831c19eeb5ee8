/* The finishing step's host half (src/reduce/finish_host.cpp) and the launcher's guard:
 * combinations the validation refuses are AKX_ERROR_INTERNAL with nothing written, never a
 * silent success (they used to return without writing, and the caller read garbage). */
#include <criterion/criterion.h>
#include <string.h>

#include "backend.h"
#include "launch/route.h"
#include "fixture.h"
#include "internal.h"

Test(finish, host_finish_refuses_what_validation_refuses) {
  akx__finish f;
  memset(&f, 0, sizeof f);
  float out = 42.0f, bare = 1.0f;
  f.dst = &out;
  f.dst_dtype = AKX_FLOAT32;
  cr_expect_eq(akx__finish_host(AKX_OP_XOR, AKX_FLOAT32, &bare, &f), AKX_ERROR_INTERNAL);
  cr_expect(strstr(akx_last_error(), "op") && strstr(akx_last_error(), "float32"), "%s",
            akx_last_error());
  cr_expect_eq(out, 42.0f, "written");
  cr_expect_eq(akx__finish_host(AKX_OP_ADD, (akx_dtype)99, &bare, &f), AKX_ERROR_INTERNAL);
  cr_expect(strstr(akx_last_error(), "99") != NULL, "%s", akx_last_error());
  cr_expect_eq(out, 42.0f, "written");
  cr_expect_eq(akx__finish_host(AKX_OP_ADD, AKX_FLOAT32, &bare, &f), AKX_SUCCESS);
  cr_expect_eq(out, 1.0f);
}

Test(finish, launcher_refuses_a_dst_dtype_it_cannot_store) {
  akx_context *ctx = tfx_open();
  float *src = tfx_alloc(ctx, 64 * sizeof(float));
  float *dst = tfx_alloc(ctx, sizeof(float));
  akx__reduce_whole_plan p;
  memset(&p, 0, sizeof p);
  p.src.data = src;
  p.src.dtype = AKX_FLOAT32;
  p.src.ndim = 1;
  p.src.n = 64;
  p.src.contiguous = 1;
  p.src.shape[0] = 64;
  p.src.strides[0] = 1;
  p.map = AKX_MAP_IDENTITY;
  p.op = AKX_OP_ADD;
  p.acc = AKX_FLOAT32;
  p.block_size = 256;
  p.items_per_thread = 4;
  p.blocks = 1;
  p.finish.dst = dst;
  p.finish.dst_dtype = 77;
  cr_expect_eq(akx__launch(ctx, akx__reduce_whole_combination(&p), &p), AKX_ERROR_INTERNAL, "%s", akx_last_error());
  cr_expect(strstr(akx_last_error(), "77") != NULL, "%s", akx_last_error());
  tfx_free(ctx, dst);
  tfx_free(ctx, src);
  tfx_close(ctx);
}
