build-dyn/freezer/slack-strategy.o: freezer/slack-strategy.c \
 common/cgroup.h common/time-util.h common/log.h common/macro.h \
 freezer/manager.h common/config.h common/standby.h common/journal.h \
 common/proc.h common/slack.h common/strv.h
common/cgroup.h:
common/time-util.h:
common/log.h:
common/macro.h:
freezer/manager.h:
common/config.h:
common/standby.h:
common/journal.h:
common/proc.h:
common/slack.h:
common/strv.h:
