/* A stand-in for libnvrtc with nvrtcVersion only, reporting $AKX_TEST_FAKE_NVRTC_VERSION
 * ("major.minor"), so that tests/test_nvrtc_choice.c can show the loader (src/jit/nvrtc.c)
 * refusing an NVRTC by the version it reports, on a machine with no such NVRTC. */
#include <stdio.h>
#include <stdlib.h>

int nvrtcVersion(int *major, int *minor) {
  const char *v = getenv("AKX_TEST_FAKE_NVRTC_VERSION");
  if (!v || sscanf(v, "%d.%d", major, minor) != 2) return 3; /* NVRTC_ERROR_INVALID_INPUT */
  return 0;
}
