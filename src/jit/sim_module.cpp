// Kernels the sim compiles at run time: the translation unit of one family for one source
// dtype (the text CMake compiles for the prebuilt kernels, src/jit/sim_module.h), compiled by
// the host C++ compiler into a shared object against the embedded kernel headers, loaded with
// dlopen and handed the sim runtime's table (include/akx/sim_device.hpp). Compiled objects go
// through the kernel cache (src/jit/cache.h): one compile per process, one per machine with
// the disk cache.
#include "sim_module.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "akx/device.cuh"
#include "akx/dtype_list.h"
#include "akx/fail.h"
#include "cache.h"
#include "compile_log.h"
#include "embedded.h"

extern char **environ;

namespace akx::sim {
const runtime_api *runtime_table();  // src/sim/module_api.cpp
}

namespace {

// What CMake builds the sim's kernels with, less what only a shared object needs: the same
// arithmetic (no contraction), so a run-time kernel gives the prebuilt one's bits.
const char *const compile_flags[] = {"-std=c++20", "-O2", "-DNDEBUG", "-ffp-contract=off",
                                     "-fPIC", "-shared", "-fvisibility=hidden",
                                     "-Wl,-Bsymbolic", "-DAKX_SIM_MODULE=1"};

struct family_info {
  const char *family, *file;
};
// Every family's entry lives in one instance file; scan and findall share theirs.
const family_info families[] = {{"reduce_whole", "reduce_whole"},
                                {"reduce_dims", "reduce_dims"},
                                {"scan", "scan"},
                                {"findall", "scan"}};

const family_info *family_of(const char *family) {
  for (const family_info &f : families)
    if (strcmp(f.family, family) == 0) return &f;
  return nullptr;
}

const char *dtype_name(int32_t dtype) {
  switch (dtype) {
#define AKX_X_(D, T, N, S) \
  case D: return #N;
    AKX_DTYPE_LIST(AKX_X_)
#undef AKX_X_
  }
  return nullptr;
}

std::string upper(const char *s) {
  std::string u(s);
  for (char &c : u) c = (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return u;
}

// ---- per process: the compiler, its version, the headers' digest; the headers on disk -----
struct toolchain {
  akx_status status = AKX_SUCCESS;
  char error[1024] = "";
  std::string cxx, version;
  akx__jit_key headers;  // every embedded file's name and bytes: part of every module's key
};
pthread_mutex_t toolchain_lock = PTHREAD_MUTEX_INITIALIZER;
toolchain *chain = nullptr;

// Runs argv with stdout and stderr into `log`; the exit status, or -1 when it cannot start.
int run(const std::vector<const char *> &argv, std::string *log) {
  char path[] = "/tmp/akx-compile-log.XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, 1);
  posix_spawn_file_actions_adddup2(&fa, fd, 2);
  std::vector<char *> args;
  for (const char *a : argv) args.push_back(const_cast<char *>(a));
  args.push_back(nullptr);
  pid_t pid;
  const int e = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = -1;
  if (e == 0) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }
  log->clear();
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) log->append(buf, (size_t)n);
  close(fd);
  unlink(path);
  return e == 0 ? status : -1;
}

bool write_file(const std::string &path, const void *data, size_t size) {
  FILE *f = fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

const toolchain &get_toolchain() {
  pthread_mutex_lock(&toolchain_lock);
  if (!chain) {
    chain = new toolchain;
    const char *env = getenv("AKX_SIM_CXX");
    chain->cxx = env && *env ? env : AKX_SIM_CXX_DEFAULT;
    std::string log;
    const int rc = run({chain->cxx.c_str(), "--version"}, &log);
    if (rc != 0) {
      chain->status = AKX_ERROR_UNSUPPORTED;
      snprintf(chain->error, sizeof chain->error,
               "the sim cannot compile kernels: the host compiler %s (%s) does not run%s", chain->cxx.c_str(),
               env && *env ? "AKX_SIM_CXX" : "the one libakx was built with; set AKX_SIM_CXX to another",
               rc < 0 ? "" : " (\"--version\" failed)");
    } else {
      chain->version = log.substr(0, log.find('\n'));
      akx__jit_hasher h;
      akx__jit_key_begin(&h);
      akx__jit_key_add_headers(&h);
      akx__jit_key_end(&h, &chain->headers);
    }
  }
  pthread_mutex_unlock(&toolchain_lock);
  return *chain;
}

// The headers written for this process ("" until the first compile), removed when it exits.
std::string headers_dir;
pthread_mutex_t headers_lock = PTHREAD_MUTEX_INITIALIZER;

void remove_headers_in(const std::string &dir) {
  for (int i = 0; i < akx__embedded_file_count; ++i) unlink((dir + "/" + akx__embedded_files[i].name).c_str());
  rmdir((dir + "/akx").c_str());
  rmdir(dir.c_str());
}
void remove_headers() {
  if (!headers_dir.empty()) remove_headers_in(headers_dir);
}

// The embedded headers on disk, written at the first compile of the process into a private
// directory (the compiler reads files; these are the bytes the prebuilt kernels were built
// from). A process whose modules all come from the cache writes none.
akx_status headers_on_disk(std::string *dir) {
  pthread_mutex_lock(&headers_lock);
  akx_status s = AKX_SUCCESS;
  if (headers_dir.empty()) {
    char tmpl[] = "/tmp/akx-headers.XXXXXX";
    if (!mkdtemp(tmpl)) {
      s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot compile kernels: mkdtemp in /tmp failed (%s)",
                    strerror(errno));
    } else {
      const std::string written = tmpl;
      for (int i = 0; i < akx__embedded_file_count && s == AKX_SUCCESS; ++i) {
        const akx__embedded_file &f = akx__embedded_files[i];
        const std::string path = written + "/" + f.name;
        mkdir(path.substr(0, path.rfind('/')).c_str(), 0700);
        if (!write_file(path, f.text, f.size))
          s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot compile kernels: writing %s failed (%s)",
                        path.c_str(), strerror(errno));
      }
      if (s == AKX_SUCCESS) {
        headers_dir = written;
        atexit(remove_headers);
      } else {
        remove_headers_in(written);
      }
    }
  }
  *dir = headers_dir;
  pthread_mutex_unlock(&headers_lock);
  return s;
}

// ---- one module -------------------------------------------------------------------------------
struct module_job {
  const toolchain *tc;
  std::string source, name;
  bool user = false;  // the unit holds a user op's source: a compile error is the caller's
};

// The first line of a compile log that reports an error (gcc's and clang's "file:line:col:
// error: ..."), else its first line. A failed static_assert of src/jit/user_op.c's checks
// says "akx rule: ...": that sentence alone.
std::string first_error(const std::string &log) {
  size_t at = 0;
  std::string first;
  while (at < log.size()) {
    const size_t end = log.find('\n', at);
    const std::string line = log.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (first.empty()) first = line;
    if (const size_t r = line.find("akx rule: "); r != std::string::npos) {
      std::string rule = line.substr(r + 10);
      while (!rule.empty() && (rule.back() == '"' || rule.back() == '\'' || rule.back() == ' ')) rule.pop_back();
      return rule;
    }
    if (line.find(": error:") != std::string::npos || line.find(": fatal error:") != std::string::npos) return line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return first;
}

akx_status build_module(void *arg, void **bytes, size_t *size) {
  auto *job = static_cast<module_job *>(arg);
  char dir[] = "/tmp/akx-module.XXXXXX";
  if (!mkdtemp(dir))
    return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot compile %s: mkdtemp failed (%s)", job->name.c_str(),
                     strerror(errno));
  const std::string src = std::string(dir) + "/" + job->name + ".cpp", out = std::string(dir) + "/" + job->name + ".so";
  std::string include_dir;
  if (akx_status hs = headers_on_disk(&include_dir); hs != AKX_SUCCESS) {
    rmdir(dir);
    return hs;
  }
  const std::string inc = "-I" + include_dir;
  std::vector<const char *> argv{job->tc->cxx.c_str()};
  for (const char *f : compile_flags) argv.push_back(f);
  argv.insert(argv.end(), {inc.c_str(), src.c_str(), "-o", out.c_str()});
  std::string log;
  akx_status s = AKX_SUCCESS;
  if (!write_file(src, job->source.data(), job->source.size())) {
    s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot compile %s: writing %s failed", job->name.c_str(), src.c_str());
  } else {
    const int rc = run(argv, &log);
    akx__compile_log_set(log.c_str());
    if (rc != 0) {
      const std::string first = first_error(log);
      if (job->user)
        s = akx__fail(AKX_ERROR_INVALID_ARGUMENT, "desc->source does not compile (%s): %s", job->tc->cxx.c_str(),
                      first.c_str());
      else
        s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim's compile of %s with %s failed (exit %d): %s",
                      job->name.c_str(), job->tc->cxx.c_str(), rc, first.c_str());
    }
  }
  if (s == AKX_SUCCESS) {
    FILE *f = fopen(out.c_str(), "rb");
    if (f) {
      fseek(f, 0, SEEK_END);
      *size = (size_t)ftell(f);
      fseek(f, 0, SEEK_SET);
      *bytes = malloc(*size ? *size : 1);
      if (!*bytes || fread(*bytes, 1, *size, f) != *size) {
        free(*bytes);
        *bytes = nullptr;
      }
      fclose(f);
    }
    if (!*bytes) s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim's compile of %s left no readable %s", job->name.c_str(), out.c_str());
  }
  unlink(src.c_str());
  unlink(out.c_str());
  rmdir(dir);
  return s;
}

// A loaded module: dlopen of the bytes (from a file, which dlopen needs, removed at once).
akx_status load_module(void *arg, const void *bytes, size_t size, void **handle) {
  auto *job = static_cast<module_job *>(arg);
  char path[] = "/tmp/akx-module.XXXXXX.so";
  const int fd = mkstemps(path, 3);
  if (fd < 0) return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot load %s: mkstemps failed", job->name.c_str());
  FILE *f = fdopen(fd, "wb");
  bool ok = f && fwrite(bytes, 1, size, f) == size;
  if (f ? fclose(f) != 0 : close(fd) != 0) ok = false;
  void *dl = ok ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  const char *why = ok ? (dl ? nullptr : dlerror()) : "the temporary file could not be written";
  unlink(path);
  if (!dl) return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot load %s: %s", job->name.c_str(), why);
  auto init = reinterpret_cast<int (*)(const akx::sim::runtime_api *)>(dlsym(dl, "akx_sim_module_init"));
  if (!init || init(akx::sim::runtime_table()) != 0) {
    dlclose(dl);
    return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot load %s: %s", job->name.c_str(),
                     init ? "it was compiled against another runtime table" : "it has no akx_sim_module_init");
  }
  *handle = dl;
  return AKX_SUCCESS;
}

}  // namespace

extern "C" akx_status akx__sim_module_source(const char *family, int32_t src_dtype, char **text) {
  const family_info *f = family ? family_of(family) : nullptr;
  const char *dt = dtype_name(src_dtype);
  if (!f) return akx__fail(AKX_ERROR_INTERNAL, "no kernel family is called \"%s\"", family ? family : "(null)");
  if (!dt) return akx__fail(AKX_ERROR_INTERNAL, "%s: source dtype %d has no kernels", family, (int)src_dtype);
  const std::string s = std::string("// The ") + f->file + " kernels of one source dtype (" + dt +
                        ") for one backend (src/jit/sim_module.h).\n#define AKX_SRC_DTYPE AKX_" + upper(dt) +
                        "\n#define AKX_SRC_NAME " + dt + "\n#include \"akx/" + f->file + "_instances.inl\"\n";
  *text = strdup(s.c_str());
  return *text ? AKX_SUCCESS : akx__fail(AKX_ERROR_OUT_OF_MEMORY, "out of host memory");
}

extern "C" akx_status akx__sim_module_open(const char *name, const char *unit, int user, void **handle) {
  const toolchain &tc = get_toolchain();
  if (tc.status != AKX_SUCCESS) return akx__fail(tc.status, "%s", tc.error);
  module_job job{&tc, std::string("#include \"akx/sim_module.inl\"\n") + unit, name, user != 0};
  // Everything that makes the object: this libakx, the compiler and its flags, the text and
  // every header it may include.
  akx__jit_hasher h;
  akx__jit_key_begin(&h);
  akx__jit_key_add_str(&h, "sim module");
  akx__jit_key_add_str(&h, akx_version());
  akx__jit_key_add_str(&h, tc.cxx.c_str());
  akx__jit_key_add_str(&h, tc.version.c_str());
  for (const char *flag : compile_flags) akx__jit_key_add_str(&h, flag);
  akx__jit_key_add_str(&h, job.source.c_str());
  akx__jit_key_add(&h, tc.headers.b, sizeof tc.headers.b);
  akx__jit_key key;
  akx__jit_key_end(&h, &key);
  return akx__jit_cache_get(&key, ".so", build_module, load_module, &job, handle);
}

extern "C" akx_status akx__sim_module_symbol(void *handle, const char *name, const char *symbol, void **entry) {
  *entry = dlsym(handle, symbol);
  if (!*entry) return akx__fail(AKX_ERROR_INTERNAL, "the sim's module %s has no entry %s", name, symbol);
  return AKX_SUCCESS;
}

extern "C" akx_status akx__sim_module_entry(const char *family, int32_t src_dtype, void **entry) {
  char *unit = nullptr;
  AKX_TRY(akx__sim_module_source(family, src_dtype, &unit));
  const std::string name = std::string("akx_") + family_of(family)->file + "_" + dtype_name(src_dtype);
  void *dl = nullptr;
  const akx_status s = akx__sim_module_open(name.c_str(), unit, 0, &dl);
  free(unit);
  AKX_TRY(s);
  const std::string symbol = std::string("akx__sim_") + family + "_" + dtype_name(src_dtype);
  return akx__sim_module_symbol(dl, name.c_str(), symbol.c_str(), entry);
}
