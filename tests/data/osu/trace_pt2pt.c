/* commbench's MPI call logger for the rest of OSU's point-to-point (not OSU's code):
 * like trace.c, plus persistent requests, MPI_Init_thread's level, communicator
 * splits and the process/thread that calls; writes /tmp/osutrace/out.<rank>.<pid>
 * (tests/data/osu/README.md: how mbw_mr, multi_lat, latency_mt/_mp, the persistent
 * programs and init were read off the binaries). */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static FILE *f;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void open_f(void){ if(!f){int r; PMPI_Comm_rank(MPI_COMM_WORLD,&r); char n[96]; snprintf(n,96,"/tmp/osutrace/out.%d.%d",r,(int)getpid()); f=fopen(n,"w");}}
#define LOG(fmt, ...) do{ pthread_mutex_lock(&mu); if(f){ fprintf(f, "%lx " fmt, (unsigned long)pthread_self() & 0xffff, ##__VA_ARGS__); fflush(f);} pthread_mutex_unlock(&mu);}while(0)
static int sz(MPI_Datatype t){int s; PMPI_Type_size(t,&s); return s;}
int MPI_Init(int *a, char ***b){int r=PMPI_Init(a,b); open_f(); LOG("Init\n"); return r;}
int MPI_Init_thread(int *a, char ***b, int q, int *p){int r=PMPI_Init_thread(a,b,q,p); open_f(); LOG("Init_thread req%d got%d\n",q,*p); return r;}
int MPI_Send(const void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm){LOG("Send %d %d tag%d\n",c*sz(t),d,tag);return PMPI_Send(buf,c,t,d,tag,comm);}
int MPI_Recv(void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm,MPI_Status *st){LOG("Recv %d %d tag%d\n",c*sz(t),d,tag);return PMPI_Recv(buf,c,t,d,tag,comm,st);}
int MPI_Isend(const void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm,MPI_Request*q){LOG("Isend %d %d tag%d\n",c*sz(t),d,tag);return PMPI_Isend(buf,c,t,d,tag,comm,q);}
int MPI_Irecv(void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm,MPI_Request*q){LOG("Irecv %d %d tag%d\n",c*sz(t),d,tag);return PMPI_Irecv(buf,c,t,d,tag,comm,q);}
int MPI_Send_init(const void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm,MPI_Request*q){int r=PMPI_Send_init(buf,c,t,d,tag,comm,q);LOG("Send_init %d %d tag%d req%x\n",c*sz(t),d,tag,(unsigned)*q);return r;}
int MPI_Recv_init(void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm,MPI_Request*q){int r=PMPI_Recv_init(buf,c,t,d,tag,comm,q);LOG("Recv_init %d %d tag%d req%x\n",c*sz(t),d,tag,(unsigned)*q);return r;}
int MPI_Start(MPI_Request*q){LOG("Start req%x\n",(unsigned)*q);return PMPI_Start(q);}
int MPI_Startall(int n,MPI_Request*q){LOG("Startall %d req%x\n",n,(unsigned)q[0]);return PMPI_Startall(n,q);}
int MPI_Request_free(MPI_Request*q){LOG("Request_free\n");return PMPI_Request_free(q);}
int MPI_Wait(MPI_Request*q,MPI_Status*s){LOG("Wait req%x\n",(unsigned)*q);return PMPI_Wait(q,s);}
int MPI_Waitall(int n,MPI_Request*q,MPI_Status*s){LOG("Waitall %d req%x\n",n,(unsigned)q[0]);return PMPI_Waitall(n,q,s);}
int MPI_Barrier(MPI_Comm c){int n; PMPI_Comm_size(c,&n); LOG("Barrier np%d\n",n);return PMPI_Barrier(c);}
double MPI_Wtime(void){LOG("Wtime\n");return PMPI_Wtime();}
int MPI_Reduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,int r,MPI_Comm m){LOG("Reduce %d root%d\n",c,r);return PMPI_Reduce(a,b,c,t,o,r,m);}
int MPI_Allreduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,MPI_Comm m){LOG("Allreduce %d\n",c);return PMPI_Allreduce(a,b,c,t,o,m);}
int MPI_Gather(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m){LOG("Gather %d\n",c);return PMPI_Gather(a,c,t,b,c2,t2,r,m);}
int MPI_Bcast(void*a,int c,MPI_Datatype t,int r,MPI_Comm m){LOG("Bcast %d\n",c);return PMPI_Bcast(a,c,t,r,m);}
int MPI_Comm_split(MPI_Comm c,int color,int key,MPI_Comm*n){LOG("Comm_split color%d key%d\n",color,key);return PMPI_Comm_split(c,color,key,n);}
int MPI_Finalize(void){LOG("Finalize\n"); if(f)fclose(f);f=0;return PMPI_Finalize();}
