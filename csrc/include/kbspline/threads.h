/*
 * kbspline/threads.h -- the worker threads behind the *_threaded calls.
 *
 *   KB_MAX_THREADS       the most threads a call uses
 *   kb_threads_shutdown  join the kept worker threads
 */
#ifndef KBSPLINE_THREADS_H
#define KBSPLINE_THREADS_H

#include "status.h"

KB_BEGIN_DECLS

/* The most threads a *_threaded call uses; a larger n_threads counts as this. */
#define KB_MAX_THREADS 256

/* Joins the worker threads that *_threaded calls start on first use and
 * keep; the next such call starts them again.  Optional: for leak checkers
 * and programs that unload the library.  Must not run beside a call. */
void kb_threads_shutdown(void);

KB_END_DECLS
#endif /* KBSPLINE_THREADS_H */
