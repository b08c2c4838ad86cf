/* error.c - status strings and the per-thread last-error message. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Size of the per-thread message buffer, terminator included. */
#define PKRT_ERROR_MAX 1024

/* Each thread has its own last error, so concurrent failures on different
 * threads never mix their messages and no lock is needed. */
static _Thread_local char tls_message[PKRT_ERROR_MAX];

typedef struct status_info {
	const char *name;        /* the enumerator's spelling */
	const char *description; /* pk_status_string's text */
} status_info;

static const status_info status_table[] = {
	[PK_SUCCESS] = {"PK_SUCCESS", "no error"},
	[PK_ERR_INVALID_VALUE] = {"PK_ERR_INVALID_VALUE", "invalid value"},
	[PK_ERR_OUT_OF_MEMORY] = {"PK_ERR_OUT_OF_MEMORY", "out of memory"},
	[PK_ERR_NO_DEVICE] = {"PK_ERR_NO_DEVICE", "no such device"},
	[PK_ERR_LAUNCH_FAILED] = {"PK_ERR_LAUNCH_FAILED", "kernel launch failed"},
	[PK_ERR_SIZE_CONSTRAINT] = {"PK_ERR_SIZE_CONSTRAINT", "a kernel's size requirement failed"},
	[PK_ERR_NO_KERNEL_FOR_DEVICE] = {"PK_ERR_NO_KERNEL_FOR_DEVICE", "kernel not compiled for this device"},
	[PK_ERR_NOT_SUPPORTED] = {"PK_ERR_NOT_SUPPORTED", "operation not supported"},
	[PK_ERR_DRIVER] = {"PK_ERR_DRIVER", "CUDA driver error"},
	[PK_ERR_INTERNAL] = {"PK_ERR_INTERNAL", "internal error"},
};

/* The table's entry for `status`, or NULL for a value outside the enum.
 * The comparison is done on an unsigned copy because an out-of-range enum
 * value may arrive from a cast. */
static const status_info *lookup(pk_status status)
{
	unsigned long i = (unsigned long)status;
	if (i >= sizeof status_table / sizeof status_table[0] || !status_table[i].name)
		return NULL;
	return &status_table[i];
}

const char *pk_status_string(pk_status status)
{
	const status_info *s = lookup(status);
	return s ? s->description : "unknown status";
}

const char *pk_status_name(pk_status status)
{
	const status_info *s = lookup(status);
	return s ? s->name : "PK_ERR_UNKNOWN";
}

const char *pk_last_error(void)
{
	return tls_message;
}

void pk_clear_error(void)
{
	tls_message[0] = '\0';
}

pk_status pk_set_error(pk_status status, const char *fmt, ...)
{
	if (status == PK_SUCCESS) {
		pk_clear_error();
		return status;
	}
	if (!fmt) {
		snprintf(tls_message, sizeof tls_message, "%s", pk_status_string(status));
		return status;
	}
	/* Format into a local buffer first: an argument may be pk_last_error()
	 * itself, and vsnprintf's source and destination must not overlap. */
	char buf[PKRT_ERROR_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0) /* an encoding error: keep at least the status */
		snprintf(buf, sizeof buf, "%s", pk_status_string(status));
	memcpy(tls_message, buf, sizeof buf);
	return status;
}
