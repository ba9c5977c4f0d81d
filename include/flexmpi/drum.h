/*
 * flexmpi/drum.h - C API of DRUM, the Dynamic Resource Utilization Model
 * (J. Faik, PhD thesis, RPI 2005, Appendix A.2).
 *
 * DRUM models the cluster as a tree (network nodes over computing nodes),
 * monitors CPU, memory and network use while the application runs, and
 * distils it into one power per node: the share of the load it should get.
 * Any partitioner able to make unequal parts can use DRUM_getLocalPartSize().
 *
 * Usable by any MPI program on its own (link with libflexmpi; XMPI_Init is not
 * needed). Typical use, every call made by every process of `comm`:
 *
 *   DRUM_machineModel* dmm = DRUM_createMachineModel(MPI_COMM_WORLD, 0);
 *   DRUM_setParam(dmm, "COMMUNICATION_WEIGHT", "0.3");
 *   DRUM_initMachineModel(dmm);
 *   DRUM_startMonitoring(dmm);  ... compute ...  DRUM_stopMonitoring(dmm);
 *   DRUM_computePowers(dmm);
 *   float share = DRUM_getLocalPartSize(dmm, &ierr);
 *   DRUM_deleteMachineModel(dmm);
 *
 * Errors never abort: a call that fails returns DRUM_FATAL (the call did
 * nothing; the model stays as it was and usable) or DRUM_WARN (the call went
 * on with a documented fallback), and prints a message naming the parameter,
 * file, node or host at fault on stderr.
 *
 * Parameters (DRUM_setParam, DRUM_readParamFile; names and values are not
 * case sensitive, INT parameters also take TRUE/FALSE):
 *   MONITORING_FREQUENCY   INT     1         seconds between two monitor samples
 *   USE_DYNAMIC_MONITORING INT     1         0: powers from the benchmarks only
 *   USE_SNMP               INT     0         1: warning, SNMP is not built in
 *   USE_KSTAT              INT     0         1: warning, Solaris only
 *   MONITOR_MEMORY         INT     0         also sample memory
 *   USE_FLAT_MODEL         INT     1         one switch over the job's hosts
 *   USE_NETWORK_POWERS     INT     1         w_comm: 0 none, 1 fixed, 2 from CAF
 *   COMMUNICATION_WEIGHT   FLOAT   0         the fixed w_comm, 0..1
 *   COMMUNICATION_POWER    STRING  AVAILABLE_BANDWIDTH  or LOG_SPEED_OVER_CAF,
 *                                            INVERSE_MEAN_CAF (thesis 3.1.2.2)
 *   PROCESSING_POWER       STRING  SMP       or EARLY (thesis 3.1.2.1)
 *   DEBUG_LEVEL            INT     createMachineModel's debug_level, 0..5
 *   XML_TOPOLOGY_FILE      STRING  drum.xml  read when USE_FLAT_MODEL is 0
 */
#ifndef FLEXMPI_DRUM_H
#define FLEXMPI_DRUM_H

#include <mpi.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Return codes (A.2). */
enum {
  DRUM_OK = 0,     /**< no error */
  DRUM_WARN = 1,   /**< a warning: the application can go on */
  DRUM_FATAL = -1, /**< the call failed */
  DRUM_MEMERR = -2 /**< memory allocation failed */
};

/** Debug levels (A.1). */
enum {
  DRUM_SILENT = 0,      /**< no output */
  DRUM_INFO_MASTER = 1, /**< the model and its powers, from rank 0 */
  DRUM_INFO_ALL = 2,    /**< plus every process's part size */
  DRUM_FORMULAS = 3,    /**< same as DRUM_INFO_ALL in this implementation */
  DRUM_MONITORS = 4,    /**< plus what the monitors measured */
  DRUM_ALL = 5          /**< everything */
};

/** An opaque machine model. */
typedef struct DRUM_machineModel_struct DRUM_machineModel;

/** Collective over comm: a new, uninitialized machine model (set parameters,
 *  then DRUM_initMachineModel). NULL on error, with a message on stderr. */
DRUM_machineModel* DRUM_createMachineModel(MPI_Comm comm, int debug_level);

/** Builds the tree: the flat model of the job's hosts, or XML_TOPOLOGY_FILE
 *  (thesis Fig. 3.5) when USE_FLAT_MODEL is 0; numbers the nodes, attaches
 *  the ranks and elects one process per host. DRUM_WARN when the XML file is
 *  missing (the flat model is used); DRUM_FATAL for a malformed file or a
 *  host it does not describe. */
int DRUM_initMachineModel(DRUM_machineModel* dmm);

/** Collective: stops monitoring and frees the model. */
int DRUM_deleteMachineModel(DRUM_machineModel* dmm);

/** Prints the tree, the ranks and the powers (when computed) to `out`
 *  (stdout if NULL). */
void DRUM_printMachineModel(DRUM_machineModel* dmm, FILE* out);

/** Sets the monitoring frequency, in tenths of a second (A.2; the
 *  MONITORING_FREQUENCY parameter counts seconds, as Table A.1 does). */
int DRUM_setMonitoringFrequency(DRUM_machineModel* dmm, int tenths);

/** Starts this process's monitoring agent (a thread). */
int DRUM_startMonitoring(DRUM_machineModel* dmm);

/** Stops the agent and keeps what it measured. */
int DRUM_stopMonitoring(DRUM_machineModel* dmm);

/** Collective: computes every node's power (thesis 3.1.2). */
int DRUM_computePowers(DRUM_machineModel* dmm);

/** This process's share of the load (the shares of all processes sum to 1);
 *  the error code in *ierr (which may be NULL). */
float DRUM_getLocalPartSize(DRUM_machineModel* dmm, int* ierr);

/** Sets one parameter (table above). DRUM_WARN, with the setting unchanged,
 *  for an unknown name or a bad value, or for a value accepted but not
 *  honoured (USE_SNMP, USE_KSTAT). */
int DRUM_setParam(DRUM_machineModel* dmm, const char* param, const char* value);

/** Sets parameters from a file of "PARAM VALUE" lines ('#' comments). Every
 *  good line is applied; DRUM_WARN if some lines were bad, DRUM_FATAL if the
 *  file cannot be read. */
int DRUM_readParamFile(DRUM_machineModel* dmm, const char* file);

#ifdef __cplusplus
}
#endif

#endif /* FLEXMPI_DRUM_H */
