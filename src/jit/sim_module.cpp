// Kernels the sim compiles at run time: a unit of one combination or of a user op
// (src/jit/sim_module.h), compiled by the host C++ compiler into a shared object against the
// embedded kernel headers, loaded with dlopen and handed the sim runtime's table
// (kernels/akx/sim_device.hpp). Compiled objects go through the kernel cache (src/jit/cache.h):
// one compile per process, one per machine with the disk cache. Where it writes meanwhile:
// src/jit/sim_module.h.
#include "sim_module.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "akx/device.cuh"
#include "akx/dtype_list.h"
#include "akx/fail.h"
#include "cache.h"
#include "compile_log.h"
#include "embedded.h"
#include "error.h"
#include "families.h"
#include "user_op.h"

extern char **environ;

namespace {

// The arithmetic CMake builds the sim's kernels with (no contraction), so a run-time kernel
// gives the prebuilt one's bits; at -O1: a unit's compile is what a first call waits for (a
// reduce_dims unit of a user op: 0.85 s at -O2, 0.62 s at -O1, 0.43 s at -O1 from the prelude
// below), and -O1 runs the kernels as fast as -O2 on the sim, whose time goes to its runtime,
// where -O0 runs ARGMIN's five times slower (test_argminmax warm: 5.4 s at -O2, 5.5 s at -O1,
// 28 s at -O0; bench/RESULTS.md, "The sim's run-time units").
const char *const compile_flags[] = {"-std=c++20", "-O1", "-DNDEBUG", "-ffp-contract=off",
                                     "-fPIC", "-fvisibility=hidden", "-DAKX_SIM_MODULE=1"};
// What only the shared object needs (not the precompiled prelude).
const char *const link_flags[] = {"-shared", "-Wl,-Bsymbolic"};

// ---- per process: the compiler, its version, the headers' digest; the headers on disk -----
struct toolchain {
  akx_status status = AKX_SUCCESS;
  char error[1024] = "";
  std::string cxx, version;
  akx__jit_key headers;  // every embedded file's name and bytes: part of every module's key
  // Units compile without the prelude (sim_module.cpp, "the prelude"): it did not build, or a
  // unit that failed from it compiled without it, or the compiler is clang.
  std::atomic<bool> no_prelude{false};
  std::atomic<int> compiles{0};         // units this process has started to compile
};
pthread_mutex_t toolchain_lock = PTHREAD_MUTEX_INITIALIZER;
toolchain *chain = nullptr;

// Where the sim writes while it compiles and loads, best first: the kernel cache's directory
// while it is in use (private to the user, checked by src/jit/cache.c, and usually on a file
// system that maps code, which a noexec /tmp does not), then $TMPDIR when
// it names a directory this process can write and search, then /tmp. A $TMPDIR that is not
// usable is passed over, as GCC's own choice of a temporary directory passes it over.
std::vector<std::string> scratch_dirs() {
  std::vector<std::string> dirs;
  if (const char *cache = akx__jit_cache_dir(); cache && *cache) dirs.emplace_back(cache);
  const char *tmp = getenv("TMPDIR");
  struct stat st;
  if (tmp && *tmp && stat(tmp, &st) == 0 && S_ISDIR(st.st_mode) && access(tmp, W_OK | X_OK) == 0)
    dirs.emplace_back(tmp);
  dirs.emplace_back("/tmp");
  return dirs;
}

// A private directory for one compile, in the first scratch directory that takes one ("" and
// a sentence in *why when none does).
std::string make_build_dir(std::string *why) {
  for (const std::string &base : scratch_dirs()) {
    std::string tmpl = base + "/akx-build.XXXXXX";
    if (mkdtemp(tmpl.data())) return tmpl;
    *why += (why->empty() ? "" : ", ") + base + " (" + strerror(errno) + ")";
  }
  return "";
}

// Removes a build directory and everything in it (the compiler's own temporary files too).
void remove_tree(const std::string &dir) {
  if (DIR *d = opendir(dir.c_str())) {
    while (const dirent *e = readdir(d)) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      const std::string path = dir + "/" + e->d_name;
      struct stat st;
      if (lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(path);
      else unlink(path.c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

// One compile's private directory (make_build_dir: `path` "" when none could be made), held
// for the compile by a shared flock that says "a live builder": the kernel cache's sweep
// (src/jit/cache.c, is_dead_build_dir) removes a stale akx-build.* directory only when it can
// lock it, which it can once the process holding this is gone, killed or not. Removed with
// everything in it when it goes, on every path.
struct build_dir {
  std::string path;
  int live_fd = -1;
  explicit build_dir(std::string *why) : path(make_build_dir(why)) {
    if (path.empty()) return;
    live_fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (live_fd >= 0) flock(live_fd, LOCK_SH);
  }
  ~build_dir() {
    if (!path.empty()) remove_tree(path);
    if (live_fd >= 0) close(live_fd);
  }
  build_dir(const build_dir &) = delete;
  build_dir &operator=(const build_dir &) = delete;
};

// Runs argv with stdout and stderr into `log` (through a pipe: no file), in directory `cwd`
// ("": ours) with TMPDIR set to `tmpdir` ("": as ours), so that whatever the compiler writes
// lands where the caller removes it. The exit status, or -1 when it cannot start.
int run(const std::vector<const char *> &argv, std::string *log, const std::string &cwd = "",
        const std::string &tmpdir = "") {
  log->clear();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 29)
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
#endif
  std::vector<char *> args;
  for (const char *a : argv) args.push_back(const_cast<char *>(a));
  args.push_back(nullptr);
  std::vector<std::string> env_text;
  std::vector<char *> env;
  const std::string tmp_setting = "TMPDIR=" + tmpdir;
  for (char **e = environ; *e; ++e)
    if (tmpdir.empty() || strncmp(*e, "TMPDIR=", 7) != 0) env.push_back(*e);
  if (!tmpdir.empty()) env.push_back(const_cast<char *>(tmp_setting.c_str()));
  env.push_back(nullptr);
  pid_t pid;
  const int e = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n > 0) log->append(buf, (size_t)n);
    else if (errno != EINTR) break;
  }
  close(fds[0]);
  int status = -1;
  if (e == 0) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }
  return e == 0 ? status : -1;
}

bool write_file(const std::string &path, const void *data, size_t size) {
  FILE *f = fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

toolchain &get_toolchain() {
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
      // Clang's precompiled headers hold their headers' absolute names (its #pragma once and its
      // checks of the inputs go by them), and each unit compiles in a directory of its own.
      chain->no_prelude = chain->version.find("clang") != std::string::npos;
      akx__jit_hasher h;
      akx__jit_key_begin(&h);
      akx__jit_key_add_headers(&h);
      akx__jit_key_end(&h, &chain->headers);
    }
  }
  pthread_mutex_unlock(&toolchain_lock);
  return *chain;
}

// The embedded headers on disk under `dir` (the compiler reads files; these are the bytes the
// prebuilt kernels were built from), written for each compile into its build directory, so
// that nothing outlives the compile.
akx_status headers_on_disk(const std::string &dir) {
  mkdir(dir.c_str(), 0700);
  for (int i = 0; i < akx__embedded_file_count; ++i) {
    const akx__embedded_file &f = akx__embedded_files[i];
    const std::string path = dir + "/" + f.name;
    for (size_t slash = path.find('/', dir.size() + 1); slash != std::string::npos; slash = path.find('/', slash + 1))
      mkdir(path.substr(0, slash).c_str(), 0700);
    if (!write_file(path, f.text, f.size))
      return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot compile kernels: writing %s failed (%s)", path.c_str(),
                       strerror(errno));
  }
  return AKX_SUCCESS;
}

// The whole file at `path` in *bytes (malloc'd) and *size; false when it cannot be read.
bool read_whole(const std::string &path, void **bytes, size_t *size) {
  FILE *f = fopen(path.c_str(), "rb");
  if (!f) return false;
  bool ok = fseek(f, 0, SEEK_END) == 0;
  const long n = ok ? ftell(f) : -1;
  ok = n >= 0 && fseek(f, 0, SEEK_SET) == 0;
  *bytes = ok ? malloc(n ? (size_t)n : 1) : nullptr;
  if (*bytes && fread(*bytes, 1, (size_t)n, f) != (size_t)n) {
    free(*bytes);
    *bytes = nullptr;
  }
  fclose(f);
  *size = *bytes ? (size_t)n : 0;
  return *bytes != nullptr;
}

// The kernel cache's key of a file the compiler makes: everything that makes it (what it is,
// this libakx, the compiler and every flag, the text and every header it may include).
akx__jit_key key_of(const char *what, const toolchain &tc, const std::string &text) {
  akx__jit_hasher h;
  akx__jit_key_begin(&h);
  akx__jit_key_add_str(&h, what);
  akx__jit_key_add_str(&h, akx_version());
  akx__jit_key_add_str(&h, tc.cxx.c_str());
  akx__jit_key_add_str(&h, tc.version.c_str());
  for (const char *flag : compile_flags) akx__jit_key_add_str(&h, flag);
  for (const char *flag : link_flags) akx__jit_key_add_str(&h, flag);
  akx__jit_key_add_str(&h, text.c_str());
  akx__jit_key_add(&h, tc.headers.b, sizeof tc.headers.b);
  akx__jit_key key;
  akx__jit_key_end(&h, &key);
  return key;
}

// ---- the prelude: every header a unit may include, precompiled once per machine --------------
// Two thirds of a unit's compile at -O0 was parsing the same headers (the C++ library's most:
// <type_traits>, <cmath>, <tuple>); compiled once into the compiler's precompiled header and
// kept in the kernel cache as a build aid (src/jit/cache.h), each unit starts from it. Its
// headers are the family list's header column (src/core/families.h) and the user ops', after
// the module's start; a unit includes a subset of them after that same start, so the prelude
// changes nothing a unit sees but the order in which guarded headers are read. Used where it
// pays: with the disk cache (one build per machine), else from a process's second compile on.
// GCC's form (name.gch beside the header, which GCC reads in place of the header wherever it
// is valid and ignores where not); a compiler whose units fail from it while they compile
// without it (what clang does, whose files name their headers' directory) loses it for the
// process.
const char prelude_name[] = "akx_prelude.h";

std::string prelude_text() {
  std::string t = "// Every header a run-time unit may include (src/jit/sim_module.cpp).\n"
                  "#include \"sim_module.inl\"\n";
  const auto add = [&t](const char *header) {
    const std::string line = std::string("#include \"") + header + "\"\n";
    if (t.find(line) == std::string::npos) t += line;
  };
#define AKX_PRELUDE_HEADER_(ID, name, Plan, header, file, launcher, kind, prebuilt, finish) add(header);
  AKX_FAMILY_LIST(AKX_PRELUDE_HEADER_)
#undef AKX_PRELUDE_HEADER_
  add(AKX__USER_OP_HEADER);
  return t;
}

akx_status build_prelude(void *arg, void **bytes, size_t *size) {
  const toolchain &tc = *static_cast<const toolchain *>(arg);
  std::string why;
  const build_dir held(&why);
  const std::string &dir = held.path;
  if (dir.empty())
    return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot precompile its prelude: no directory to build in (%s)",
                     why.c_str());
  const std::string include_dir = dir + "/include", header = include_dir + "/" + prelude_name,
                    out = dir + "/prelude.out", text = prelude_text();
  akx_status s = headers_on_disk(include_dir);
  if (s == AKX_SUCCESS && !write_file(header, text.data(), text.size()))
    s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot precompile its prelude: writing %s failed (%s)",
                  header.c_str(), strerror(errno));
  if (s == AKX_SUCCESS) {
    const std::string inc = "-I" + include_dir;
    std::vector<const char *> argv{tc.cxx.c_str()};
    for (const char *f : compile_flags) argv.push_back(f);
    argv.insert(argv.end(), {inc.c_str(), "-x", "c++-header", header.c_str(), "-o", out.c_str()});
    std::string log;
    const int rc = run(argv, &log, dir, dir);
    if (rc != 0)
      s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim's prelude did not precompile with %s (exit %d): %s",
                    tc.cxx.c_str(), rc, log.substr(0, log.find('\n')).c_str());
    else if (!read_whole(out, bytes, size) || *size == 0)
      s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim's precompiled prelude %s cannot be read", out.c_str());
  }
  return s;
}

akx_status load_prelude(void *, const void *bytes, size_t size, void **handle) {
  if (!bytes || size == 0) return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim's precompiled prelude is empty");
  *handle = const_cast<void *>(bytes);  // the cache's bytes, valid while the entry lives
  return AKX_SUCCESS;
}

// The precompiled prelude's bytes for this toolchain, or false: then units compile without it
// (no error: a compiler that cannot precompile still compiles, only slower).
bool prelude_bytes(toolchain &tc, const void **bytes, size_t *size) {
  const int started = tc.compiles.fetch_add(1);
  if (tc.no_prelude.load()) return false;
  const char *disk = akx__jit_cache_dir();
  if (!(disk && *disk) && started == 0) return false;
  const akx__jit_key key = key_of("sim prelude", tc, prelude_text());
  const char *kind = ".gch";
  akx__error_saved before;
  akx__error_save(&before);
  void *handle = nullptr;
  if (akx__jit_cache_get_aid(&key, kind, build_prelude, load_prelude, &tc, &handle) == AKX_SUCCESS &&
      akx__jit_cache_bytes(&key, kind, bytes, size) == AKX_SUCCESS)
    return true;
  akx__error_restore(&before);
  tc.no_prelude.store(true);
  return false;
}

// ---- one module -------------------------------------------------------------------------------
struct module_job {
  toolchain *tc;
  std::string source, name;
  const akx_user_op_desc *user = nullptr;  // the unit holds this user op's source
  const akx::sim::runtime_api *runtime = nullptr;  // what the module calls (akx_sim_module_init)
};

// The first line of a compile log that reports an error (gcc's and clang's "file:line:col:
// error: ..."), else its first line.
std::string first_error(const std::string &log) {
  size_t at = 0;
  std::string first;
  while (at < log.size()) {
    const size_t end = log.find('\n', at);
    const std::string line = log.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (first.empty()) first = line;
    if (line.find(": error:") != std::string::npos || line.find(": fatal error:") != std::string::npos) return line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return first;
}

// Compiles in a private directory (src/jit/sim_module.h: where), removed with everything in it
// on every path. A user unit's compiler runs in that directory beside the user's own text
// under the names its #line directives give (src/jit/user_op.h), so that the log quotes the
// user's lines.
akx_status build_module(void *arg, void **bytes, size_t *size) {
  auto *job = static_cast<module_job *>(arg);
  std::string why;
  const build_dir held(&why);
  const std::string &dir = held.path;
  if (dir.empty())
    return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot compile %s: no directory to build in (%s)",
                     job->name.c_str(), why.c_str());
  const std::string src = dir + "/" + job->name + ".cpp", out = dir + "/" + job->name + ".so",
                    include_dir = dir + "/include";
  akx_status s = headers_on_disk(include_dir);
  const void *pch = nullptr;
  size_t pch_size = 0;
  const std::string prelude = include_dir + "/" + prelude_name, text = prelude_text();
  if (s == AKX_SUCCESS && prelude_bytes(*job->tc, &pch, &pch_size) &&
      !(write_file(prelude, text.data(), text.size()) &&
        write_file(prelude + ".gch", pch, pch_size)))
    pch = nullptr;  // a unit compiles without it
  if (s == AKX_SUCCESS && (!write_file(src, job->source.data(), job->source.size()) ||
                           (job->user && (!write_file(dir + "/" AKX__USER_SOURCE_FILE, job->user->source,
                                                      strlen(job->user->source)) ||
                                          !write_file(dir + "/" AKX__USER_ACC_FILE, job->user->acc_type,
                                                      strlen(job->user->acc_type))))))
    s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot compile %s: writing in %s failed (%s)", job->name.c_str(),
                  dir.c_str(), strerror(errno));
  if (s == AKX_SUCCESS) {
    const std::string inc = "-I" + include_dir;
    const auto compile = [&](bool from_prelude, std::string *log) {
      std::vector<const char *> argv{job->tc->cxx.c_str()};
      for (const char *f : compile_flags) argv.push_back(f);
      for (const char *f : link_flags) argv.push_back(f);
      if (from_prelude) argv.insert(argv.end(), {"-include", prelude.c_str()});
      argv.insert(argv.end(), {inc.c_str(), src.c_str(), "-o", out.c_str()});
      return run(argv, log, dir, dir);
    };
    std::string log;
    int rc = compile(pch != nullptr, &log);
    // A unit that fails from the prelude is compiled without it, whose log is the one reported
    // (a user's error reads as it would without the prelude); where that works, the prelude was
    // what failed, and the process's later units go without it.
    if (rc != 0 && pch && (rc = compile(false, &log)) == 0) job->tc->no_prelude.store(true);
    akx__compile_log_set(log.c_str());
    if (rc != 0) {
      const std::string first = first_error(log);
      if (job->user)
        s = akx__user_op_refusal(job->tc->cxx.c_str(), first.c_str());
      else
        s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim's compile of %s with %s failed (exit %d): %s",
                      job->name.c_str(), job->tc->cxx.c_str(), rc, first.c_str());
    }
  }
  if (s == AKX_SUCCESS) {
    if (!read_whole(out, bytes, size)) s = akx__fail(AKX_ERROR_UNSUPPORTED, "the sim's compile of %s left no readable %s", job->name.c_str(), out.c_str());
  }
  return s;
}

// Hands a dlopen'ed module the runtime table (its akx_sim_module_init), or closes it.
akx_status init_module(void *dl, const char *name, const akx::sim::runtime_api *runtime, void **handle) {
  auto init = reinterpret_cast<int (*)(const akx::sim::runtime_api *)>(dlsym(dl, "akx_sim_module_init"));
  if (!init || init(runtime) != 0) {
    dlclose(dl);
    return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot load %s: %s", name,
                     init ? "it was compiled against another runtime table" : "it has no akx_sim_module_init");
  }
  *handle = dl;
  return AKX_SUCCESS;
}

// A loaded module: dlopen of the bytes from a file (dlopen needs one), removed at once. The
// file goes to the first scratch directory whose files can be mapped executable: a noexec
// mount refuses the dlopen, and the next directory is tried.
akx_status load_module(void *arg, const void *bytes, size_t size, void **handle) {
  auto *job = static_cast<module_job *>(arg);
  void *dl = nullptr;
  std::string why;
  for (const std::string &base : scratch_dirs()) {
    std::string path = base + "/akx-module.XXXXXX.so";
    const int fd = mkstemps(path.data(), 3);
    if (fd < 0) {
      why += (why.empty() ? "" : "; ") + base + ": " + strerror(errno);
      continue;
    }
    FILE *f = fdopen(fd, "wb");
    bool ok = f && fwrite(bytes, 1, size, f) == size;
    if (f ? fclose(f) != 0 : close(fd) != 0) ok = false;
    dl = ok ? dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (!dl) {
      const char *e = ok ? dlerror() : "the file could not be written";
      why += (why.empty() ? "" : "; ") + base + ": " + (e ? e : "dlopen failed");
    }
    unlink(path.c_str());
    if (dl) break;
  }
  if (!dl) return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot load %s: %s", job->name.c_str(), why.c_str());
  return init_module(dl, job->name.c_str(), job->runtime, handle);
}

}  // namespace

extern "C" akx_status akx__sim_module_open(const void *runtime, const char *name, const char *unit,
                                          const akx_user_op_desc *user, void **handle) {
  toolchain &tc = get_toolchain();
  if (tc.status != AKX_SUCCESS) return akx__fail(tc.status, "%s", tc.error);
  if (!runtime) return akx__fail(AKX_ERROR_INTERNAL, "%s: no sim runtime table to load it with", name);
  module_job job{&tc, std::string("#include \"sim_module.inl\"\n") + unit, name, user,
                 static_cast<const akx::sim::runtime_api *>(runtime)};
  const akx__jit_key key = key_of("sim module", tc, job.source);
  return akx__jit_cache_get(&key, ".so", build_module, load_module, &job, handle);
}

extern "C" akx_status akx__sim_module_load(const void *runtime, const char *name, const char *path, void **handle) {
  if (!runtime) return akx__fail(AKX_ERROR_INTERNAL, "%s: no sim runtime table to load it with", name);
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *e = dlerror();
    return akx__fail(AKX_ERROR_UNSUPPORTED, "the sim cannot load %s (%s): %s", name, path, e ? e : "dlopen failed");
  }
  return init_module(dl, name, static_cast<const akx::sim::runtime_api *>(runtime), handle);
}

extern "C" akx_status akx__sim_module_symbol(void *handle, const char *name, const char *symbol, void **entry) {
  *entry = dlsym(handle, symbol);
  if (!*entry) return akx__fail(AKX_ERROR_INTERNAL, "the sim's module %s has no entry %s", name, symbol);
  return AKX_SUCCESS;
}
