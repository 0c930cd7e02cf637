/* Reading a process's memory figures (VmRSS, VmHWM, ...) from
 * /proc/<pid>/status, for the load tools' reports. */
#ifndef SOTLS_EXAMPLES_PROC_STATUS_H
#define SOTLS_EXAMPLES_PROC_STATUS_H

/* The value in kB of the line "key:" of the status file at path (such as
 * "/proc/self/status"), or -1 if there is no such file or line. */
long proc_status_kb(const char *path, const char *key);

#endif
