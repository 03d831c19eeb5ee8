/* The calling thread's last run-time compile log (NVRTC's, or a host compiler's), kept apart
 * from akx_last_error(): the sentence there names the first error, the log holds them all,
 * and a later public akx_last_compile_log() returns it. */
#ifndef AKX_JIT_COMPILE_LOG_H
#define AKX_JIT_COMPILE_LOG_H
#ifdef __cplusplus
extern "C" {
#endif

/* Replaces the calling thread's log with a copy of `log` (NULL clears it). When the copy
 * cannot be allocated the log is left empty rather than stale. */
void akx__compile_log_set(const char *log);

/* The calling thread's log, "" when it has none; valid until its next akx__compile_log_set. */
const char *akx__compile_log_get(void);

#ifdef __cplusplus
}
#endif
#endif
