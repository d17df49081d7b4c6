/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The journal's MESSAGE_ID of each kind of wake message, fixed for good:
 * units/standby.catalog describes each, and `journalctl MESSAGE_ID=...`
 * finds them. */
#define WAKE_MESSAGE_THAW "4c4065f2aee2493c8ff59e2596e94716" /* units thawed by an event or a Thaw call */
#define WAKE_MESSAGE_END "793ecc6437ce434aa5022019186e5f74" /* a thaw window ended: its units freeze again */
#define WAKE_MESSAGE_EXIT "c9f3bd71ce264f0893071ee595b49916" /* an ExitStandby= rule ends standby */
