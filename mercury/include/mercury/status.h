/* Status codes every Mercury call returns (0 = success, negative = failure). */
#ifndef MC_MERCURY_STATUS_H
#define MC_MERCURY_STATUS_H

typedef enum {
    MC_OK = 0,
    MC_ERR_INVALID = -1,   /* bad argument (NULL, wrong size, unknown option) */
    MC_ERR_NO_MEMORY = -2, /* allocation failed */
    MC_ERR_SOCKET = -3,    /* socket/bind/send failed for a non-transient reason */
    MC_ERR_STATE = -4,     /* call not allowed now (end without start, message open, ...) */
    MC_ERR_TOO_LARGE = -5, /* message larger than MC_MAX_MESSAGE_SIZE or its fixed length */
    MC_ERR_OVERFLOW = -6,  /* a channel's overflow queue (or the nub's once-off queue) hit
                              its bound; the data was refused */
    MC_ERR_DEAD = -7,      /* the channel is dead or condemned */
    MC_ERR_ADDRESS = -8,   /* address text does not parse */
    MC_ERR_DROPPED = -9,   /* (mc_nub_process_datagram) the datagram was rejected */
} mc_status;

/* A short constant name for a status ("ok", "invalid", ...). */
const char *mc_status_name(int status);

#endif
