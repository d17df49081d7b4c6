build-dyn/common/bus-monitor.o: common/bus-monitor.c common/bus-monitor.h \
 common/macro.h
common/bus-monitor.h:
common/macro.h:
